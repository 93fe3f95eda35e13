"""Where the labels of a picture go: the placement loop of ``labels.layout_labels`` and the
placed labels it returns (:class:`PlacedLabel`).

Labels are placed one by one in their priority order: each takes the first of its candidate
slots (``layout.slot_corners``) whose interior meets no label placed before (``taken``: one
Python int of column bits per picture row), else (``leader`` placement) the free space nearest
its atom (``free_space.FreeSpace``) with a leader line, else it is stuck at its default slot.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from .layout import leader_pixels, slot_corners

#: Pixels kept free between the boxes of two labels of the ``leader`` layout (the text of
#: neighbouring labels stays apart, for the eye and for OCR).
LABEL_GAP = 0


class PlacedLabel(NamedTuple):
    """One label where it is drawn: ``key`` is ``("atom", complex atom index)``,
    ``("residue", residue index)`` or ``("chain", -1)`` (the caption naming the one chain of a
    pocket picture); ``x, y`` the top-left pixel of its sprite (``width`` x
    ``height``, font size ``px``); ``free`` whether it found a place no other label overlaps;
    ``rank`` its place in the placement order (0 first; the drawing order differs: stuck labels
    are drawn first); ``anchor`` the pixel its leader line starts from (its atom, or its
    residue's CA), ``None`` when it sits next to its atom without one; ``leader`` the drawn
    pixels of that line as float32 ``x, y`` pairs (``layout.leader_pixels``; ``layout.leader_xy``
    reads them).

    An immutable named tuple rather than a frozen dataclass: ``place_labels`` makes about 100 a
    picture, and a tuple is made in one C call (a frozen dataclass set its fields one by one,
    about 3 % of a picture's render time)."""

    key: tuple[str, int]
    text: str
    colour: tuple[int, int, int]
    px: int
    x: int
    y: int
    width: int
    height: int
    free: bool
    rank: int = 0
    anchor: tuple[int, int] | None = None
    leader: bytes = b""


#: ``_placed(fields)``: the :class:`PlacedLabel` of every field in order, made in C.
_placed = partial(tuple.__new__, PlacedLabel)


def place_labels(
    entries, dims, px, size, slots_of, block_stuck, taken, space, fp
) -> list[PlacedLabel]:
    """Place the sorted layout entries (``labels.layout_labels``; ``dims``: each one's sprite
    width and height, font size ``px``) on a ``size`` px picture; ``space``: the
    :class:`~.free_space.FreeSpace` of the ``leader`` placement (``None``: no free-space search),
    ``fp`` the ligand's footprint (leader lines pass under it)."""
    free: list[tuple] = []  # PlacedLabel fields less the leader line
    stuck: list[PlacedLabel] = []
    leaders: list = []
    corners = slot_corners(entries, dims, slots_of, size)
    # rows ``size`` on: every bit set; a slot off the picture (first row ``size + 1``) tests them
    edge = len(taken)
    taken += [-1] * (max((d[1] for d in dims), default=0) + 2)
    gap, leader = LABEL_GAP, space is not None
    for rank, (_, _, lu, lv, _, text, colour, _, key) in enumerate(entries):
        if not text:
            continue
        w, h = dims[rank]
        x0, y0, shifts, firsts = corners[rank]
        placed = anchor = None
        # interior columns as bits; no interior (w or h <= 2) overlaps nothing
        bits = (1 << (w - 2)) - 1 if w > 2 and h > 2 else 0
        if bits:
            # a slot's interior rows r1 .. r1 + last: the first and last tested first (labels
            # are about equally tall, so an overlap usually covers one of them), then the others
            last = h - 3
            for sh, r1 in zip(shifts, firsts):
                mask = bits << sh
                if taken[r1] & mask or taken[r1 + last] & mask:
                    continue
                for row in taken[r1 + 1 : r1 + last]:
                    if row & mask:
                        break
                else:
                    placed = (sh - 1, r1 - 1)
                    break
        else:  # nothing to overlap: the first slot inside the picture
            placed = next(((sh - 1, r1 - 1) for sh, r1 in zip(shifts, firsts) if r1 <= size), None)
        if placed is None and leader:
            spot = space.nearest(w + 2 * gap, h + 2 * gap, lu, lv)
            if spot is not None:
                placed = (spot[0] + gap, spot[1] + gap)
                anchor = (int(round(lu)), int(round(lv)))
        if placed is None:
            x, y = int(round(x0)), int(round(y0))
            stuck.append(PlacedLabel(key, text, colour, px, x, y, w, h, False, rank))
            if block_stuck and bits:
                take_clipped(taken, x, y, w, h, size)
        else:
            x, y = placed
            if leader:  # the whole box and a gap around it (inside the picture: no clipping)
                lo, top, bottom = x - gap, y - gap, y + h + gap
                mask = ((1 << (w + 2 * gap)) - 1) << lo
                if lo < 0 or top < 0 or bottom > size or lo + w + 2 * gap > size:
                    take_clipped(taken, lo - 1, top - 1, w + 2 + 2 * gap, h + 2 + 2 * gap, size)
                else:
                    taken[top:bottom] = map(mask.__or__, taken[top:bottom])
            elif bits:
                mask = bits << (x + 1)
                taken[y + 1 : y + h - 1] = [row | mask for row in taken[y + 1 : y + h - 1]]
            if anchor is not None:
                leaders.append((len(free), anchor, (x, y, w, h)))
            free.append((key, text, colour, px, x, y, w, h, True, rank, anchor, b""))
        if leader:
            space.take(x - gap, y - gap, w + 2 * gap, h + 2 * gap)
    del taken[edge:]
    for (k, _, _), line in zip(
        leaders, leader_pixels([(a, box) for _, a, box in leaders], fp, size)
    ):
        free[k] = free[k][:11] + (line,)
    return stuck + list(map(_placed, free))


def take_clipped(taken: list[int], x: int, y: int, w: int, h: int, size: int) -> None:
    """Mark the interior of a label at (x, y), clipped to the picture, as taken."""
    lo, hi = max(x + 1, 0), min(x + w - 2, size - 1)
    if lo > hi:
        return
    mask = ((1 << (hi - lo + 1)) - 1) << lo
    y0, y1 = max(y + 1, 0), min(y + h - 1, size)
    taken[y0:y1] = [row | mask for row in taken[y0:y1]]

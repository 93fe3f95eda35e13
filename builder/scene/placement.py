"""Where the labels of a picture go: the placement loop of ``labels.layout_labels`` and the
placed labels it returns (:class:`PlacedLabel`).

Labels are placed one by one in their priority order: each takes the first of its candidate
slots (``layout.slot_corners``) whose interior meets no label placed before (``taken``: one
Python int of column bits per picture row), else (``leader`` placement) the free space nearest
its atom (``free_space.FreeSpace``) with a leader line, else it is stuck at its default slot.
A picture that keeps its question's reference picture's labels (RENDER_VERSION 9,
``RenderRequest.reference``) first tries each label at its offset from its atom in the
reference (:func:`kept_offsets`, :func:`_kept_spots`).
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
    reads them); ``origin`` the picture point (px, floats) the label belongs to (its atom, or its
    residue's CA), from which a question's later pictures keep its offset (``kept_offsets``).

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
    origin: tuple[float, float] | None = None


#: ``_placed(fields)``: the :class:`PlacedLabel` of every field in order, made in C.
_placed = partial(tuple.__new__, PlacedLabel)


def kept_offsets(placed) -> dict:
    """The offsets a question's later pictures keep (RENDER_VERSION 9, issue 53): per label key
    of the reference picture's labels that found a free place, ``(dx, dy, leader)``: its
    top-left pixel minus its ``origin`` (px) and whether it hangs on a leader line. The chain
    caption and stuck labels keep nothing."""
    return {
        lb.key: (lb.x - lb.origin[0], lb.y - lb.origin[1], lb.anchor is not None)
        for lb in placed
        if lb.free and lb.origin is not None and lb.key[0] != "chain"
    }


def _kept_spots(entries, dims, size, taken, space, keep, gap, start=0) -> list:
    """Per entry, ``(x, y, anchor)`` where it keeps its offset from its origin, else ``None``
    (entries before ``start``, or of a later tier when ``keep`` is no shift: ``None``).
    ``keep``: ``(offsets, shift)``, the offsets of :func:`kept_offsets` and whether the picture
    is its reference shifted in its plane. When ``shift`` every label's kept box is tried before
    any other label; otherwise those of one placement tier (``entries[k][0][0]``: the names an
    answer can need come first) before the other labels of that tier, from ``start`` on. A box
    is kept, and taken at once, when it lies inside the picture and (unless ``shift``: the
    translated layout, labels move with their atoms) its interior meets nothing taken."""
    out: list = [None] * len(entries)
    if not keep or not keep[0]:
        return out
    keep, shift = keep
    tier = entries[start][0][0] if start < len(entries) else None
    for rank in range(start, len(entries)):
        entry = entries[rank]
        if not shift and entry[0][0] != tier:
            break
        offset = keep.get(entry[8])
        if offset is not None and entry[5]:
            out[rank] = _kept_spot(entry, dims[rank], size, taken, offset, shift)
            if out[rank] is not None:
                _take_box(taken, space, *out[rank][:2], *dims[rank], size, gap)
    return out


def _kept_spot(entry, dim, size: int, taken, offset, shift: bool):
    """``(x, y, anchor)`` of a label at its kept ``offset`` from its origin when the box lies
    inside the picture and (unless ``shift``) its interior meets nothing taken (the ligand's
    footprint, the caption, the labels placed before it), else ``None``."""
    lu, lv = entry[2], entry[3]
    (w, h), x, y = dim, round(lu + offset[0]), round(lv + offset[1])
    if x < 0 or y < 0 or x + w > size or y + h > size:
        return None
    if w > 2 and h > 2 and not shift:
        mask = ((1 << (w - 2)) - 1) << (x + 1)
        if any(row & mask for row in taken[y + 1 : y + h - 1]):
            return None
    return x, y, (int(round(lu)), int(round(lv))) if offset[2] else None


def _take_box(taken, space, x: int, y: int, w: int, h: int, size: int, gap: int) -> None:
    """Take a ``leader`` label's whole box and a gap around it (``taken`` and ``space``)."""
    lo, top, bottom = x - gap, y - gap, y + h + gap
    mask = ((1 << (w + 2 * gap)) - 1) << lo
    if lo < 0 or top < 0 or bottom > size or lo + w + 2 * gap > size:
        take_clipped(taken, lo - 1, top - 1, w + 2 + 2 * gap, h + 2 + 2 * gap, size)
    else:
        taken[top:bottom] = map(mask.__or__, taken[top:bottom])
    space.take(x - gap, y - gap, w + 2 * gap, h + 2 * gap)


def _slot(taken, bits: int, h: int, shifts, firsts, size: int):
    """The top-left pixel of the first free slot (``slot_corners``' ``shifts``, ``firsts``),
    or ``None``."""
    if not bits:  # nothing to overlap: the first slot inside the picture
        return next(((sh - 1, r1 - 1) for sh, r1 in zip(shifts, firsts) if r1 <= size), None)
    # a slot's interior rows r1 .. r1 + last: the first and last tested first (labels are
    # about equally tall, so an overlap usually covers one of them), then the others
    last = h - 3
    for sh, r1 in zip(shifts, firsts):
        mask = bits << sh
        if taken[r1] & mask or taken[r1 + last] & mask:
            continue
        for row in taken[r1 + 1 : r1 + last]:
            if row & mask:
                break
        else:
            return sh - 1, r1 - 1
    return None


def place_labels(
    entries, dims, px, size, slots_of, block_stuck, taken, space, fp, keep=None
) -> list[PlacedLabel]:
    """Place the sorted layout entries (``labels.layout_labels``; ``dims``: each one's sprite
    width and height, font size ``px``) on a ``size`` px picture; ``space``: the
    :class:`~.free_space.FreeSpace` of the ``leader`` placement (``None``: no free-space search),
    ``fp`` the ligand's footprint (leader lines pass under it); ``keep``: the offsets of the
    question's reference picture and whether the picture is it shifted (``_kept_spots``,
    ``leader`` only), tried first."""
    free: list[tuple] = []  # PlacedLabel fields less the leader line
    stuck: list[PlacedLabel] = []
    leaders: list = []
    corners = slot_corners(entries, dims, slots_of, size)
    # rows ``size`` on: every bit set; a slot off the picture (first row ``size + 1``) tests them
    edge = len(taken)
    taken += [-1] * (max((d[1] for d in dims), default=0) + 2)
    gap, leader = LABEL_GAP, space is not None
    keep = keep if leader and keep and keep[0] else None
    kept = _kept_spots(entries, dims, size, taken, space, keep, gap)
    for rank, (order, _, lu, lv, _, text, colour, _, key) in enumerate(entries):
        if keep and not keep[1] and rank and order[0] != entries[rank - 1][0][0]:
            kept[rank:] = _kept_spots(entries, dims, size, taken, space, keep, gap, rank)[rank:]
        if not text:
            continue
        w, h = dims[rank]
        x0, y0, shifts, firsts = corners[rank]
        origin = (lu, lv)
        if kept[rank] is not None:
            x, y, anchor = kept[rank]
            if anchor is not None:
                leaders.append((len(free), anchor, (x, y, w, h)))
            free.append((key, text, colour, px, x, y, w, h, True, rank, anchor, b"", origin))
            continue
        anchor = None
        # interior columns as bits; no interior (w or h <= 2) overlaps nothing
        bits = (1 << (w - 2)) - 1 if w > 2 and h > 2 else 0
        placed = _slot(taken, bits, h, shifts, firsts, size)
        if placed is None and leader:
            spot = space.nearest(w + 2 * gap, h + 2 * gap, lu, lv)
            if spot is not None:
                placed = (spot[0] + gap, spot[1] + gap)
                anchor = (int(round(lu)), int(round(lv)))
        if placed is None:
            x, y = int(round(x0)), int(round(y0))
            stuck.append(
                PlacedLabel(key, text, colour, px, x, y, w, h, False, rank, None, b"", origin)
            )
            if block_stuck and bits:
                take_clipped(taken, x, y, w, h, size)
            if leader:
                space.take(x - gap, y - gap, w + 2 * gap, h + 2 * gap)
            continue
        x, y = placed
        if leader:
            _take_box(taken, space, x, y, w, h, size, gap)
        elif bits:
            mask = bits << (x + 1)
            taken[y + 1 : y + h - 1] = [row | mask for row in taken[y + 1 : y + h - 1]]
        if anchor is not None:
            leaders.append((len(free), anchor, (x, y, w, h)))
        free.append((key, text, colour, px, x, y, w, h, True, rank, anchor, b"", origin))
    del taken[edge:]
    for (k, _, _), line in zip(
        leaders, leader_pixels([(a, box) for _, a, box in leaders], fp, size)
    ):
        free[k] = free[k][:11] + (line,) + free[k][12:]
    return stuck + list(map(_placed, free))


def take_clipped(taken: list[int], x: int, y: int, w: int, h: int, size: int) -> None:
    """Mark the interior of a label at (x, y), clipped to the picture, as taken."""
    lo, hi = max(x + 1, 0), min(x + w - 2, size - 1)
    if lo > hi:
        return
    mask = ((1 << (hi - lo + 1)) - 1) << lo
    y0, y1 = max(y + 1, 0), min(y + h - 1, size)
    taken[y0:y1] = [row | mask for row in taken[y0:y1]]

"""The ``leader`` label layout (RENDER_VERSION 5): labels in free space, leader lines, the
ligand kept clear.

Publication figures of dense pockets put a label next to its atom where there is room and
otherwise in the nearest free space, joined to its atom by a thin leader line. This module does
that with two occupancy records of the picture (output pixels):

* ``taken``: one Python int of column bits per image row (the boxes of placed labels and the
  ligand's footprint), which ``labels.layout_labels`` tests its near slots against;
* ``free_space.FreeSpace``: the picture cut into lines of text and ``CELL`` px columns, a
  cell taken when any of its pixels is, searched line by line (nearest first) for the free
  box nearest to the label's atom when no near slot is free.

The ligand's footprint (:func:`ligand_footprint`) is its drawn atoms and sticks, widened by
one pixel: no label is placed over it, so the ligand is never buried under text, and leader
lines are not drawn over it (they pass under it). In T4's close-ups the residue's atoms are kept
clear too. A picture of the ligand alone (T7's ligand views) has no footprint: its labels are
the ligand's own names. Placement is integer and IEEE arithmetic on the picture's own
coordinates in a fixed order, so the layout is the same in every process.

The placement order's reach (:data:`BOND_REACH`, :func:`picture_reach`): which residue labels
are placed right after the ligand's polar names is decided in the picture (2D, RENDER_VERSION 8),
so a label's place tells no more than the drawn positions do.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImagePath

from .pillow_core import mask_painters

#: Where a label may go, in order of preference, as (dx, dy) multiples of (label width, label
#: height) added to the default top-left corner, plus (sx, sy) multiples of the atom's radius.
#: Atom names start right of the atom; residue labels start centred above the residue.
_ATOM_SLOTS = (
    (0, 0, 0, 0),
    (-1, 0, -2, 0),
    (-0.5, -0.5, -1, -1),
    (-0.5, 0.5, -1, 1),
    (0, -0.6, 0, -1),
    (0, 0.6, 0, 1),
    (-1, -0.6, -2, -1),
    (-1, 0.6, -2, 1),
)
_RESIDUE_SLOTS = (
    (0, 0, 0, 0),
    (0, 1, 0, 1),
    (0.5, 0.5, 1, 1),
    (-0.5, 0.5, -1, 1),
    (0, -1, 0, 0),
    (0, 2, 0, 1),
    (0.55, 0, 1, 0),
    (-0.55, 0, -1, 0),
)
#: Further slots of the ``avoid`` placement (RENDER_VERSION 4), tried after the first ring: a
#: label moved off its neighbours by up to about three label heights (or one label width),
#: nearest slots first.
_ATOM_SLOTS_FAR = (
    (0, -1.2, 0, -1),
    (0, 1.2, 0, 1),
    (-1, -1.2, -2, -1),
    (-1, 1.2, -2, 1),
    (0.5, 0, 1, 0),
    (-1.5, 0, -2, 0),
    (-0.5, -1.7, -1, -1),
    (-0.5, 1.7, -1, 1),
    (0, -2.4, 0, -1),
    (0, 2.4, 0, 1),
    (-1, -2.4, -2, -1),
    (-1, 2.4, -2, 1),
    (1, 0, 2, 0),
    (-2, 0, -2, 0),
)
_RESIDUE_SLOTS_FAR = (
    (0, -2, 0, 0),
    (0, 3, 0, 1),
    (1.05, 0, 1, 0),
    (-1.05, 0, -1, 0),
    (0.55, -1, 1, 0),
    (-0.55, -1, -1, 0),
    (0.55, 2, 1, 1),
    (-0.55, 2, -1, 1),
    (0, -3, 0, 0),
    (0, 4, 0, 1),
    (1.05, -1.5, 1, 0),
    (-1.05, -1.5, -1, 0),
    (1.05, 2.5, 1, 1),
    (-1.05, 2.5, -1, 1),
)
#: The slots of each placement: (atom-name slots, residue-label slots).
SLOTS = {
    "leader": (_ATOM_SLOTS + _ATOM_SLOTS_FAR, _RESIDUE_SLOTS + _RESIDUE_SLOTS_FAR),
    "avoid": (_ATOM_SLOTS + _ATOM_SLOTS_FAR, _RESIDUE_SLOTS + _RESIDUE_SLOTS_FAR),
    "avoid3": (_ATOM_SLOTS, _RESIDUE_SLOTS),
    "overlap": ((), ()),
}


def ligand_bonds(complex_, atoms: np.ndarray, ligand_only: bool = True) -> np.ndarray:
    """(M, 2) positions in ``atoms`` of the bonds whose ends are both shown ligand atoms (or,
    ``ligand_only=False``, both shown)."""
    if complex_.bonds.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    position = np.full(complex_.n_atoms, -1, dtype=np.int64)
    position[atoms] = np.arange(atoms.size)
    pairs = np.asarray(complex_.bonds, dtype=np.int64).reshape(-1, 2)
    if ligand_only:
        pairs = pairs[complex_.is_ligand[pairs].all(axis=1)]
    pairs = position[pairs]
    return pairs[(pairs >= 0).all(axis=1) & (pairs[:, 0] != pairs[:, 1])]


def shown_chains(complex_, atoms: np.ndarray) -> tuple[str, ...]:
    """The chain ids (sorted, blank ones left out) of the residues among ``atoms``."""
    res = np.unique(complex_.residue_index[atoms])
    chains = {complex_.residues[r].chain.strip() for r in res.tolist() if r >= 0}
    return tuple(sorted(c for c in chains if c))


def chain_caption_spot(w: int, h: int, size: int, taken: list[int]) -> tuple[int, int]:
    """Top-left corner (px) of a picture's chain caption (``w`` x ``h`` px): the first corner
    (top-left, top-right, bottom-left, bottom-right, 2 px in) whose box meets nothing in
    ``taken`` (column bits per row: the ligand's footprint), else the top-left corner."""
    far_x, far_y = size - w - 2, size - h - 2
    corners = ((2, 2), (far_x, 2), (2, far_y), (far_x, far_y))
    for x, y in corners:
        mask = ((1 << w) - 1) << x
        if not any(row & mask for row in taken[y : y + h]):
            return x, y
    return corners[0]


def residue_text(residue, chains: bool) -> str:
    """A residue's label: ``ASN 460``, with its chain (``ASN 460 B``) where the picture shows
    residues of more than one chain (T9's answers name chains)."""
    return f"{residue.label} {residue.chain}" if chains and residue.chain.strip() else residue.label


#: Pixels added around the ligand's atoms and sticks in its footprint.
FOOTPRINT_MARGIN = 1


@dataclass(frozen=True, eq=False)
class Footprint:
    """The ligand's drawn atoms and sticks: a bool ``mask`` whose top-left pixel is at
    (``x``, ``y``) of the picture (it may reach past the picture's edges)."""

    mask: np.ndarray
    x: int
    y: int

    def full(self, size: int) -> np.ndarray:
        """The (size, size) bool mask of the whole picture."""
        out = np.zeros((size, size), dtype=bool)
        h, w = self.mask.shape
        x0, y0 = max(self.x, 0), max(self.y, 0)
        x1, y1 = min(self.x + w, size), min(self.y + h, size)
        if x1 > x0 and y1 > y0:
            out[y0:y1, x0:x1] = self.mask[y0 - self.y : y1 - self.y, x0 - self.x : x1 - self.x]
        return out


def ligand_footprint(
    u, v, alive, radius_px, ligand, bonds, stick_ratio: float, size: int, alone: bool = False
):
    """The :class:`Footprint` of the ligand's drawn atoms and sticks (output px, widened by
    :data:`FOOTPRINT_MARGIN`), or ``None`` when no ligand atom is drawn or every drawn atom is
    a ligand atom (``alone``: also then). ``u``, ``v``, ``radius_px``: per shown atom at the
    output size; ``ligand``: bool per shown atom (the atoms to keep clear); ``bonds``: (M, 2)
    positions of drawn bonds; ``stick_ratio``: stick radius / atom radius."""
    drawn = alive & ligand
    if not drawn.any() or (not alone and bool(ligand[alive].all())):
        return None
    rows = np.flatnonzero(drawn)
    reach = radius_px[rows] + FOOTPRINT_MARGIN + 1
    x0 = int(np.floor((u[rows] - reach).min()))
    y0 = int(np.floor((v[rows] - reach).min()))
    x1 = int(np.ceil((u[rows] + reach).max())) + 1
    y1 = int(np.ceil((v[rows] + reach).max())) + 1
    x0, y0 = max(x0, -1), max(y0, -1)
    x1, y1 = min(x1, size + 1), min(y1, size + 1)
    if x1 <= x0 or y1 <= y0:
        return None
    mask = Image.new("1", (x1 - x0, y1 - y0), 0)
    line, disc = mask_painters(mask)
    # the sticks, then the discs, each from its (x0, y0, x1, y1) and stick width, computed for
    # all at once with the same float operations as one by one (widths rounded half to even)
    if len(bonds):
        drawn_bonds = bonds[alive[bonds[:, 0]] & alive[bonds[:, 1]]]
        a, b = drawn_bonds[:, 0], drawn_bonds[:, 1]
        width = (radius_px[a] + radius_px[b]) * stick_ratio + 2 * FOOTPRINT_MARGIN
        ends = np.stack([u[a] - x0, v[a] - y0, u[b] - x0, v[b] - y0], axis=1)
        widths = np.maximum(np.rint(width), 1).astype(np.int64)
        deque(map(line, ends.tolist(), widths.tolist()), maxlen=0)
    r = radius_px[rows] + FOOTPRINT_MARGIN
    x, y = u[rows] - x0, v[rows] - y0
    deque(map(disc, np.stack([x - r, y - r, x + r, y + r], axis=1).tolist()), maxlen=0)
    return Footprint(np.asarray(mask, dtype=bool), x0, y0)


def footprint_rows(fp: Footprint | None, size: int) -> list[int]:
    """The footprint as one Python int of column bits per picture row (bit ``x`` = column x)."""
    taken = [0] * size
    if fp is None:
        return taken
    h, w = fp.mask.shape
    y0, y1 = max(fp.y, 0), min(fp.y + h, size)
    x0, x1 = max(fp.x, 0), min(fp.x + w, size)
    if y1 > y0 and x1 > x0:
        part = fp.mask[y0 - fp.y : y1 - fp.y, x0 - fp.x : x1 - fp.x]
        taken[y0:y1] = [bits << x0 for bits in row_bits(part)]
    return taken


def row_bits(mask: np.ndarray) -> list[int]:
    """Each row of a 2-D bool array as one Python int of column bits (bit ``x`` = column x)."""
    packed = np.packbits(mask, axis=1, bitorder="little")
    data, step = packed.tobytes(), packed.shape[1]
    return [int.from_bytes(data[k : k + step], "little") for k in range(0, len(data), step)]


def leader_pixels(leaders, fp: Footprint | None, size: int) -> list[bytes]:
    """The pixels of each leader line as float32 ``x0, y0, x1, y1, ...`` (bytes: the buffer
    Pillow's point drawer reads without a Python number per coordinate; ``leader_xy`` gives
    the integer pairs back): the digital straight line
    from its ``anchor`` to the nearest pixel of its label's box, less the pixels of the ligand's
    footprint (the line passes under the ligand, which stays whole) and those outside the
    picture. ``leaders``: ``(anchor, (x, y, w, h))`` pairs; all lines are computed at once."""
    if not leaders:
        return []
    raw = np.array([(ax, ay, *box) for (ax, ay), box in leaders], dtype=np.int64)
    ax, ay, bx, by = raw[:, 0], raw[:, 1], raw[:, 2], raw[:, 3]
    # the box pixel nearest to the anchor (``leader_end``)
    ex = np.minimum(np.maximum(ax, bx), bx + raw[:, 4] - 1) - ax
    ey = np.minimum(np.maximum(ay, by), by + raw[:, 5] - 1) - ay
    n = np.maximum(np.abs(ex), np.abs(ey)) + 1
    which = np.repeat(np.arange(len(leaders)), n)
    start = np.cumsum(n) - n
    step = np.arange(int(n[-1] + start[-1])) - start[which]
    t = step / np.maximum(n - 1, 1)[which]
    xs = np.rint(ax[which] + t * ex[which]).astype(np.int64)
    ys = np.rint(ay[which] + t * ey[which]).astype(np.int64)
    keep = (xs >= 0) & (xs < size) & (ys >= 0) & (ys < size)
    if fp is not None:
        h, w = fp.mask.shape
        fx, fy = xs - fp.x, ys - fp.y
        inside = keep & (fx >= 0) & (fx < w) & (fy >= 0) & (fy < h)
        hidden = np.zeros(xs.size, dtype=bool)
        hidden[inside] = fp.mask[fy[inside], fx[inside]]
        keep &= ~hidden
    counts = np.bincount(which[keep], minlength=len(leaders))
    pairs = np.empty((int(counts.sum()), 2), dtype=np.float32)  # whole pixels: exact
    pairs[:, 0], pairs[:, 1] = xs[keep], ys[keep]
    raw, ends = pairs.tobytes(), (8 * np.cumsum(counts)).tolist()
    return list(map(raw.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def leader_xy(pixels: bytes) -> list[tuple[int, int]]:
    """The ``(x, y)`` pixels of a leader line of :func:`leader_pixels`."""
    return [(int(x), int(y)) for x, y in np.frombuffer(pixels, dtype=np.float32).reshape(-1, 2)]


def leader_end(x: int, y: int, w: int, h: int, ax: int, ay: int) -> tuple[int, int]:
    """The pixel of a label's box (top-left ``x, y``) nearest to its atom at (``ax``, ``ay``)."""
    return min(max(ax, x), x + w - 1), min(max(ay, y), y + h - 1)


@lru_cache(maxsize=256)
def leader_colour(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """A leader line's colour: its label's, dimmed (a thin guide, not a stick)."""
    return tuple(int(c * 0.6) for c in rgb)  # type: ignore[return-value]


def leader_line(label) -> tuple[bytes, tuple[int, int, int]] | None:
    """``(pixels, colour)`` of a placed label's leader line, ``None`` when it has none."""
    if not label.leader:
        return None
    return label.leader, leader_colour(label.colour)


def draw_lines(image, lines, dx: int = 0, dy: int = 0) -> None:
    """Draw leader lines ``(pixels, colour)`` (``leader_pixels``), moved by (``dx``, ``dy``)."""
    # consecutive lines of one colour in one call (the same pixels: a later line of another
    # colour still paints over an earlier one where they cross)
    runs: list = []
    for line in lines:
        if line is None or not line[0]:
            continue
        pixels, colour = line
        if runs and runs[-1][1] == colour:
            runs[-1][0].append(pixels)
        else:
            runs.append(([pixels], colour))
    if not runs:
        return
    draw = ImageDraw.Draw(image)
    for parts, colour in runs:
        # whole-pixel float32 coordinates (``leader_pixels``) moved by whole pixels in C
        # (Pillow's path transform); the point drawer truncates them to the same integers
        path = ImagePath.Path(parts[0] if len(parts) == 1 else b"".join(parts))
        if dx or dy:
            path.transform((1, 0, dx, 0, 1, dy))
        draw.point(path, fill=colour)


def draw_leaders(image, labels, top: int = 0) -> None:
    """Draw the leader lines of the placed labels that have one (1 px, under every label)."""
    draw_lines(image, [leader_line(lb) for lb in labels if lb.leader], 0, -top)


def take_clipped(taken: list[int], x: int, y: int, w: int, h: int, size: int) -> None:
    """Mark the interior of a label at (x, y), clipped to the picture, as taken."""
    lo, hi = max(x + 1, 0), min(x + w - 2, size - 1)
    if lo > hi:
        return
    mask = ((1 << (hi - lo + 1)) - 1) << lo
    for row in range(max(y + 1, 0), min(y + h - 1, size)):
        taken[row] |= mask


def slot_corners(entries, dims, slots_of, size: int) -> list:
    """Per entry: its default corner (x0, y0) and, for each of its candidate slots
    (:data:`SLOTS`) in order, ``x + 1`` (the shift of its interior columns) and ``y + 1`` (its
    first interior row), as lists of ints (``x, y`` the slot's top-left pixel; a slot not
    wholly inside the ``size`` px picture has ``max(x + 1, 0)`` and ``size + 1``), computed for
    all entries at once (the same floating-point operations, in the same order, as one by one:
    ``x0 + dx * w + sx * r``, rounded half to even)."""
    if not entries:
        return []
    atom_slots, residue_slots = slots_of
    if len(atom_slots) != len(residue_slots):  # one table per kind of label
        out: list = [None] * len(entries)
        for centred, slots in ((False, atom_slots), (True, residue_slots)):
            rows = [k for k, e in enumerate(entries) if bool(e[7]) == centred]
            if rows:
                sub = [entries[k] for k in rows], [dims[k] for k in rows]
                part = _corners(*sub, (slots, slots), size)
                for k, found in zip(rows, part):
                    out[k] = found
        return out
    return _corners(entries, dims, slots_of, size)


def _corners(entries, dims, tables, size: int) -> list:
    """:func:`slot_corners` of ``entries`` with ``tables`` (the atom names' and the residue
    labels' slots, of one length)."""
    facts = np.array([(e[2], e[3], e[4], bool(e[7])) for e in entries], dtype=np.float64)
    lu, lv, r, centred = facts[:, 0], facts[:, 1], facts[:, 2], facts[:, 3] > 0
    wh = np.array(dims, dtype=np.float64).reshape(-1, 2)
    w, h = wh[:, 0], wh[:, 1]
    x0 = np.where(centred, lu - w / 2.0, (lu + 1) + r)
    y0 = np.where(centred, (lv - h) - 2, lv - h / 2.0)
    table = _tables(tables)[centred.astype(np.int64)]  # (entries, slots, 4)
    xs = np.rint(x0[:, None] + table[:, :, 0] * w[:, None] + table[:, :, 2] * r[:, None])
    ys = np.rint(y0[:, None] + table[:, :, 1] * h[:, None] + table[:, :, 3] * r[:, None])
    inside = (xs >= 0) & (ys >= 0) & (xs <= size - w[:, None]) & (ys <= size - h[:, None])
    shifts = np.maximum(xs + 1, 0).astype(np.int64).tolist()
    firsts = np.where(inside, ys + 1, size + 1).astype(np.int64).tolist()
    return list(zip(x0.tolist(), y0.tolist(), shifts, firsts))


@lru_cache(maxsize=16)
def _tables(tables: tuple) -> np.ndarray:
    """(2, slots, 4) float64: the two slot tables of :func:`_corners`."""
    out = np.array([np.array(t, dtype=np.float64).reshape(-1, 4) for t in tables])
    out.setflags(write=False)
    return out


# ---------------------------------------------------------------------------- placement order

#: The reach (Å) that puts a residue's label (or a residue atom's name) right after the
#: ligand's polar atom names, before the ligand's carbons. ``leader`` (RENDER_VERSION 8): the
#: label's anchor within this many Å of a drawn ligand atom *in the picture* (2D, in the
#: picture's own scale: the drawn atom radius over ``Style.atom_radius``), so the order follows
#: what the picture shows, never 3D distances or H-bonds (issue 53). The legacy placements
#: (``avoid``, ``avoid3``, ``overlap``) keep the 3D distance to a shown ligand atom.
BOND_REACH = 4.5


def picture_reach(la, u, v, alive, radius_px, style, size):
    """``(reach, distance)``: :data:`BOND_REACH` in px of this picture (the drawn ligand atoms'
    median radius in px over ``style.atom_radius``) and a function giving the px distance from
    picture points ``(pu, pv)`` to the nearest drawn ligand atom (inf when none is drawn)."""
    rows = np.flatnonzero(la.ligand & alive & (u >= 0) & (u < size) & (v >= 0) & (v < size))
    lu, lv = u[rows].astype(np.float64), v[rows].astype(np.float64)
    scale = float(np.median(radius_px[rows])) / style.atom_radius if rows.size else 0.0

    def distance(pu, pv) -> np.ndarray:
        pu, pv = np.asarray(pu, dtype=np.float64), np.asarray(pv, dtype=np.float64)
        if not rows.size:
            return np.full(pu.shape, np.inf)
        d2 = (pu[:, None] - lu[None, :]) ** 2 + (pv[:, None] - lv[None, :]) ** 2
        return np.sqrt(d2.min(axis=1)) if pu.size else np.zeros(0)

    return BOND_REACH * scale, distance


def order_distance(la, rows, u, v, picture):
    """``(reach, distances)`` that order the labels of the atoms at ``rows``: in the picture
    (``picture``: the ``leader`` placement's :func:`picture_reach`), else the legacy 3D ones."""
    rows = np.asarray(rows, dtype=np.int64)
    if picture is None:
        return BOND_REACH, la.near[rows]
    reach, distance = picture
    return reach, distance(u[rows], v[rows])

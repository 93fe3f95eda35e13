"""The ``leader`` label layout (RENDER_VERSION 5): labels in free space, leader lines, the
ligand kept clear.

Publication figures of dense pockets put a label next to its atom where there is room and
otherwise in the nearest free space, joined to its atom by a thin leader line. This module does
that with two occupancy records of the picture (output pixels):

* ``taken``: one Python int of column bits per image row (the interiors of placed labels and
  the ligand's footprint), which ``labels.layout_labels`` tests its near slots against;
* a coarse grid of :data:`CELL` px cells (:class:`FreeSpace`), any of whose pixels taken marks
  the cell taken, searched as a summed-area table for the free cell-aligned box nearest to
  the label's atom when no near slot is free.

The ligand's footprint (:func:`ligand_footprint`) is its drawn atoms and sticks, widened by
one pixel: no label is placed over it, so the ligand is never buried under text. A picture of
the ligand alone (T7's ligand views) has no footprint: its labels are the ligand's own names.
Everything here is integer arithmetic on the picture's own coordinates, so the layout is the
same in every process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

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


def ligand_bonds(complex_, atoms: np.ndarray) -> np.ndarray:
    """(M, 2) positions in ``atoms`` of the bonds whose ends are both shown ligand atoms."""
    if complex_.bonds.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    position = np.full(complex_.n_atoms, -1, dtype=np.int64)
    position[atoms] = np.arange(atoms.size)
    pairs = np.asarray(complex_.bonds, dtype=np.int64).reshape(-1, 2)
    keep = complex_.is_ligand[pairs].all(axis=1)
    pairs = position[pairs[keep]]
    return pairs[(pairs >= 0).all(axis=1) & (pairs[:, 0] != pairs[:, 1])]


def many_chains(complex_, atoms: np.ndarray) -> bool:
    """Whether the shown residues belong to more than one chain."""
    res = np.unique(complex_.residue_index[atoms])
    return len({complex_.residues[r].chain for r in res.tolist() if r >= 0}) > 1


def residue_text(residue, chains: bool) -> str:
    """A residue's label: ``ASN 460``, with its chain (``ASN 460 B``) where the picture shows
    residues of more than one chain (T9's answers name chains)."""
    return f"{residue.label} {residue.chain}" if chains and residue.chain.strip() else residue.label


#: Side (px) of a free-space grid cell.
CELL = 4
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


def ligand_footprint(u, v, alive, radius_px, ligand, bonds, stick_ratio: float, size: int):
    """The :class:`Footprint` of the ligand's drawn atoms and sticks (output px, widened by
    :data:`FOOTPRINT_MARGIN`), or ``None`` when no ligand atom is drawn or every drawn atom is
    a ligand atom. ``u``, ``v``, ``radius_px``: per shown atom at the output size; ``ligand``:
    bool per shown atom; ``bonds``: (M, 2) positions of drawn bonds; ``stick_ratio``: stick
    radius / atom radius."""
    drawn = alive & ligand
    if not drawn.any() or bool(ligand[alive].all()):
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
    draw = ImageDraw.Draw(mask)
    if len(bonds):
        both = alive[bonds[:, 0]] & alive[bonds[:, 1]]
        for a, b in bonds[both].tolist():
            width = (radius_px[a] + radius_px[b]) * stick_ratio + 2 * FOOTPRINT_MARGIN
            draw.line(
                (float(u[a]) - x0, float(v[a]) - y0, float(u[b]) - x0, float(v[b]) - y0),
                fill=1,
                width=max(1, int(round(width))),
            )
    for k in rows.tolist():
        r = float(radius_px[k]) + FOOTPRINT_MARGIN
        x, y = float(u[k]) - x0, float(v[k]) - y0
        draw.ellipse((x - r, y - r, x + r, y + r), fill=1)
    return Footprint(np.asarray(mask, dtype=bool), x0, y0)


def footprint_rows(fp: Footprint | None, size: int) -> list[int]:
    """The footprint as one Python int of column bits per picture row (bit ``x`` = column x)."""
    taken = [0] * size
    if fp is None:
        return taken
    mask = fp.full(size)
    lo, hi = max(fp.y, 0), min(fp.y + fp.mask.shape[0], size)
    if hi > lo:
        packed = np.packbits(mask[lo:hi], axis=1, bitorder="little")
        taken[lo:hi] = [int.from_bytes(row.tobytes(), "little") for row in packed]
    return taken


class FreeSpace:
    """The coarse occupancy grid of a picture (bool per :data:`CELL` px cell): :meth:`take`
    marks a box, :meth:`nearest` finds the free cell-aligned box of a label's size nearest to
    its atom (a summed-area table of the grid: every box of the picture tested at once)."""

    def __init__(self, size: int, fp: Footprint | None = None):
        self.size = size
        self.n = n = -(-size // CELL)
        grid = np.zeros((n, n), dtype=bool)
        if fp is not None:
            full = np.zeros((n * CELL, n * CELL), dtype=bool)
            full[:size, :size] = fp.full(size)
            grid = full.reshape(n, CELL, n, CELL).any(axis=(1, 3))
        self.grid = grid
        self._sat = np.zeros((n + 1, n + 1), dtype=np.int32)
        self._corner = np.arange(n, dtype=np.float64) * CELL

    def take(self, x: int, y: int, w: int, h: int) -> None:
        """Mark the cells a box (top-left ``x, y``, ``w`` x ``h`` px) touches."""
        i0, j0 = max(x // CELL, 0), max(y // CELL, 0)
        i1, j1 = min((x + w - 1) // CELL + 1, self.n), min((y + h - 1) // CELL + 1, self.n)
        if i1 > i0 and j1 > j0:
            self.grid[j0:j1, i0:i1] = True

    def nearest(self, w: int, h: int, ax: float, ay: float) -> tuple[int, int] | None:
        """Top-left corner (px) of the free cell-aligned ``w`` x ``h`` box inside the picture
        whose centre is nearest to (``ax``, ``ay``) (ties: the first in row-major order), or
        ``None`` when there is none."""
        ni, nj = (self.size - w) // CELL + 1, (self.size - h) // CELL + 1
        if ni <= 0 or nj <= 0:
            return None
        cw, ch = -(-w // CELL), -(-h // CELL)
        sat = self._sat
        np.cumsum(np.cumsum(self.grid, axis=0, dtype=np.int32), axis=1, out=sat[1:, 1:])
        box = sat[ch : ch + nj, cw : cw + ni] - sat[:nj, cw : cw + ni]
        box -= sat[ch : ch + nj, :ni]
        box += sat[:nj, :ni]
        dx = self._corner[:ni] - (ax - w / 2.0)
        dy = self._corner[:nj] - (ay - h / 2.0)
        dist = np.add.outer(dy * dy, dx * dx)
        dist[box != 0] = np.inf
        k = int(np.argmin(dist))
        if dist.flat[k] == np.inf:
            return None
        j, i = divmod(k, ni)
        return i * CELL, j * CELL


def leader_end(x: int, y: int, w: int, h: int, ax: int, ay: int) -> tuple[int, int]:
    """The pixel of a label's box (top-left ``x, y``) nearest to its atom at (``ax``, ``ay``)."""
    return min(max(ax, x), x + w - 1), min(max(ay, y), y + h - 1)


def leader_colour(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """A leader line's colour: its label's, dimmed (a thin guide, not a stick)."""
    return tuple(int(c * 0.6) for c in rgb)  # type: ignore[return-value]


def leader_pixels(
    anchor: tuple[int, int], box: tuple[int, int, int, int], fp: Footprint | None, size: int
) -> tuple[int, ...]:
    """The pixels of a leader line, flat ``(x0, y0, x1, y1, ...)``: the digital straight line
    from ``anchor`` to the nearest pixel of the label's ``box`` (``x, y, w, h``), less the
    pixels of the ligand's footprint (the line passes under the ligand, which stays whole) and
    those outside the picture."""
    ax, ay = anchor
    ex, ey = leader_end(*box, ax, ay)
    n = max(abs(ex - ax), abs(ey - ay)) + 1
    t = np.arange(n, dtype=np.float64) / max(n - 1, 1)
    xs = np.rint(ax + t * (ex - ax)).astype(np.int64)
    ys = np.rint(ay + t * (ey - ay)).astype(np.int64)
    keep = (xs >= 0) & (xs < size) & (ys >= 0) & (ys < size)
    if fp is not None:
        h, w = fp.mask.shape
        fx, fy = xs - fp.x, ys - fp.y
        inside = keep & (fx >= 0) & (fx < w) & (fy >= 0) & (fy < h)
        hidden = np.zeros(n, dtype=bool)
        hidden[inside] = fp.mask[fy[inside], fx[inside]]
        keep &= ~hidden
    return tuple(np.stack([xs[keep], ys[keep]], axis=1).reshape(-1).tolist())


def leader_line(label) -> tuple[tuple[int, ...], tuple[int, int, int]] | None:
    """``(pixels, colour)`` of a placed label's leader line, ``None`` when it has none."""
    if not label.leader:
        return None
    return label.leader, leader_colour(label.colour)


def draw_lines(image, lines, dx: int = 0, dy: int = 0) -> None:
    """Draw leader lines ``(pixels, colour)`` (``leader_pixels``), moved by (``dx``, ``dy``)."""
    draw = None
    for line in lines:
        if line is None:
            continue
        if draw is None:
            draw = ImageDraw.Draw(image)
        pixels, colour = line
        if dx or dy:
            pixels = [v + (dy if k & 1 else dx) for k, v in enumerate(pixels)]
        draw.point(pixels, fill=colour)


def draw_leaders(image, labels, top: int = 0) -> None:
    """Draw the leader lines of the placed labels that have one (1 px, under every label)."""
    draw_lines(image, [leader_line(lb) for lb in labels], 0, -top)

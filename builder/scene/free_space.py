"""Free space for the labels of the ``leader`` layout (``layout``): the picture cut into lines of
text and :data:`CELL` px columns, searched line by line for the free box nearest to an atom when
no slot beside the atom is free (``placement.place_labels``)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .layout import Footprint, row_bits

#: Side (px) of a free-space grid cell.
CELL = 4


class FreeSpace:
    """Where a label with no room beside its atom may go: the picture cut into lines of text
    (``line`` px tall, from the top) and columns of :data:`CELL` px, one Python int of column
    bits per line (a cell is taken when any taken pixel lies in it: the ligand's footprint,
    every placed label and its gap). :meth:`nearest` finds the free box nearest to an atom."""

    def __init__(self, size: int, line: int, fp: Footprint | None = None):
        self.size, self.line = size, max(1, int(line))
        self.n_lines = size // self.line
        self.n_cols = -(-size // CELL)
        self.rows = [0] * self.n_lines
        # the free columns found by earlier searches, per (box width in cells, lines it spans,
        # columns it may start on): two lists, line n's take count when found and its free
        # bits, stale once a later take touched the line (``changed[n]``: the count of that take)
        self._free: dict[tuple[int, int, int], tuple[list[int], list[int]]] = {}
        self._takes = 0
        self.changed = [0] * self.n_lines
        if fp is not None:
            self._take_footprint(fp)

    def _take_footprint(self, fp: Footprint) -> None:
        h, w = fp.mask.shape
        y0, y1 = max(fp.y, 0), min(fp.y + h, self.n_lines * self.line)
        x0, x1 = max(fp.x, 0), min(fp.x + w, self.size)
        if y1 <= y0 or x1 <= x0:
            return
        c0 = x0 // CELL
        part = np.zeros((y1 - y0, (-(-x1 // CELL) - c0) * CELL), dtype=bool)
        part[:, x0 - c0 * CELL : x1 - c0 * CELL] = fp.mask[
            y0 - fp.y : y1 - fp.y, x0 - fp.x : x1 - fp.x
        ]
        cells = part.reshape(y1 - y0, -1, CELL).any(axis=2)
        # the rows of cells padded to whole lines, then each line's cells taken by any row
        first, last = y0 // self.line, -(-y1 // self.line)
        lines = np.zeros(((last - first) * self.line, cells.shape[1]), dtype=bool)
        lines[y0 - first * self.line : y1 - first * self.line] = cells
        taken = lines.reshape(last - first, self.line, -1).any(axis=1)
        for line, bits in zip(range(first, last), row_bits(taken)):
            self.rows[line] |= bits << c0

    def take(self, x: int, y: int, w: int, h: int) -> None:
        """Mark the cells a box (top-left ``x, y``, ``w`` x ``h`` px) touches."""
        i0, i1, last = x // CELL, (x + w - 1) // CELL, self.n_cols - 1
        i0 = i0 if i0 > 0 else 0
        i1 = i1 if i1 < last else last
        if i1 < i0:
            return
        line, last = self.line, self.n_lines - 1
        l0, l1 = y // line, (y + h - 1) // line
        l0 = l0 if l0 > 0 else 0
        l1 = l1 if l1 < last else last
        bits = ((1 << (i1 - i0 + 1)) - 1) << i0
        rows, changed = self.rows, self.changed
        self._takes = stamp = self._takes + 1
        for n in range(l0, l1 + 1):
            rows[n] |= bits
            changed[n] = stamp

    def nearest(self, w: int, h: int, ax: float, ay: float) -> tuple[int, int] | None:
        """Top-left corner (px) of the free ``w`` x ``h`` box nearest to (``ax``, ``ay``)
        (box centre to point; ties: the first line, then the first column), or ``None``. A box
        starts on a column and spans ``k`` whole lines, centred on them. Lines are visited
        nearest first; the search stops at the first line farther than the best box found."""
        line, k, cell = self.line, -(-h // self.line), CELL
        ni, nl = (self.size - w) // cell + 1, self.n_lines - k + 1
        if ni <= 0 or nl <= 0:
            return None
        cw = -(-w // cell)
        shifts = _shifts(cw)
        valid = (1 << ni) - 1
        tx = ax - w / 2.0  # the box corner whose centre is the atom
        # the nearest free columns are the first at or right of c + 1 and the last at or left
        # of c, the column left of the exact corner
        c = min(max(int(tx // cell), 0), ni - 1) + 1
        below = (1 << c) - 1
        centre = k * line / 2.0
        at = (ay - centre) / line
        up = min(max(int(at // 1), -1), nl - 1)
        down = up + 1
        best_d, best_n, best_i = math.inf, -1, -1  # squared distance, line, column
        rows, changed, stamp = self.rows, self.changed, self._takes
        known = self._free.get((cw, k, ni))
        if known is None:
            known = self._free[cw, k, ni] = ([-1] * nl, [0] * nl)
        found_at, found = known
        while up >= 0 or down < nl:
            if down >= nl or (up >= 0 and at - up <= down - at):
                n = up
                up -= 1
            else:
                n = down
                down += 1
            dy = n * line + centre - ay
            dy2 = dy * dy
            if dy2 > best_d:
                break
            if found_at[n] < (changed[n] if k == 1 else max(changed[n : n + k])):
                # a box k lines tall: the cells taken on any of its lines
                occupied = rows[n] if k == 1 else _or_all(rows[n : n + k])
                for s in shifts:  # widen: bit i set when any of bits i .. i + cw - 1 is
                    occupied |= occupied >> s
                found[n] = free = valid & ~occupied
                found_at[n] = stamp
            else:
                free = found[n]
            if not free:
                continue
            high = free >> c
            if high:
                i = c + (high & -high).bit_length() - 1
                dx = i * cell - tx
                d = dx * dx + dy2
                if d < best_d or (d == best_d and (n, i) < (best_n, best_i)):
                    best_d, best_n, best_i = d, n, i
            low = free & below
            if low:
                i = low.bit_length() - 1
                dx = i * cell - tx
                d = dx * dx + dy2
                if d < best_d or (d == best_d and (n, i) < (best_n, best_i)):
                    best_d, best_n, best_i = d, n, i
        if best_n < 0:
            return None
        return best_i * cell, best_n * line + (k * line - h) // 2


def _or_all(rows: list[int]) -> int:
    out = 0
    for r in rows:
        out |= r
    return out


@lru_cache(maxsize=256)
def _shifts(cw: int) -> tuple[int, ...]:
    """The right shifts that widen a row of bits ``cw`` wide (``FreeSpace.nearest``): 1, 2,
    4, ... while the span doubles within ``cw``, then the rest."""
    out, span = [], 1
    while span * 2 <= cw:
        out.append(span)
        span *= 2
    if span < cw:
        out.append(cw - span)
    return tuple(out)

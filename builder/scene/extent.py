"""What a supersampled drawing touches, and its downsampling limited to that.

The rasteriser draws only the rows that hold primitives or labels and downsamples only the
columns they can touch (whole supersampling blocks); every other pixel of the picture is black.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image


def downsample(image, ss: int, size: int, xs, dims, polys: np.ndarray, top: int | None):
    """The drawing downsampled by ``ss`` (box filter): its rows only (``top`` None), or the
    whole ``size`` px picture with them at row ``top``. Only the columns that primitives can
    touch are computed (whole ``ss`` blocks; every other column is black)."""
    width, height = image.size
    lo, hi = span(xs, dims, polys[:, 0::2] if len(polys) else polys, width, ss)
    if ss == 1:
        lo, hi = 0, width
    if lo == 0 and hi == width and (top is None or height == width):
        return image.reduce(ss) if ss > 1 else image
    out = Image.new("RGB", (size, height // ss if top is None else size), (0, 0, 0))
    if hi > lo:
        part = image.reduce(ss, (lo, 0, hi, height)) if ss > 1 else image
        out.paste(part, (lo // ss, 0 if top is None else top))
    return out


def span(starts, dims, coords: np.ndarray, limit: int, ss: int) -> tuple[int, int]:
    """``(lo, hi)``: the part of ``0 .. limit`` that sprites (``starts`` + ``dims``) and polygon
    vertex coordinates (``coords``, 2 px of margin) can touch, widened by one ``ss`` block and
    to whole blocks, clipped to ``0 .. limit``."""
    lo, hi = limit, 0
    if len(starts):
        lo, hi = int(starts.min()), int((starts + dims).max())
    if coords.size:
        lo = min(lo, int(math.floor(coords.min())) - 2)
        hi = max(hi, int(math.ceil(coords.max())) + 2)
    return max(0, lo - lo % ss - ss), min(limit, hi + ss + (-hi) % ss)


def content_rows(ys, dims, polys: np.ndarray, limit: int, ss: int) -> tuple[int, int]:
    """``(y0, y1)``: the rows of the ``limit``-px drawing that primitives can touch (sprites at
    rows ``ys`` of heights ``dims``; polygons ``polys``), widened to whole supersampling blocks
    and clipped to the drawing.

    Drawing these rows only (all columns) gives the same pixels as drawing the whole picture:
    sprites are pasted at whole-pixel boxes, and Pillow's polygon filler depends on the vertices'
    x coordinates and on differences of y coordinates only, which a whole-pixel vertical shift
    leaves unchanged (column offsets are not used: they would change the rounding of the x
    intercepts); ``y0`` is a multiple of ``ss``, so the downsampling averages the same pixels."""
    return span(ys, dims, polys[:, 1::2] if len(polys) else polys, limit, ss)


#: Side (output px) of the cells of :func:`hidden_under_labels`'s coverage grid.
_COVER_CELL = 2


def hidden_under_labels(prim, placed, xs, ys, dims, polys, size: int, ss: int) -> np.ndarray:
    """Per primitive of ``prim`` (spheres then polygons, ``_draw_list`` numbering), whether
    every output pixel it can touch lies under an opaque label box (labels are pasted over the
    downsampled picture and every pixel of a label's sprite is opaque: its dark panel), so that
    drawing it changes no pixel of the picture. Tested on a grid of :data:`_COVER_CELL` px
    cells, each marked only when one label box holds it whole (a summed-area table)."""
    c = _COVER_CELL
    n = -(-size // c)
    grid = np.zeros((n, n), dtype=np.int32)
    for lb in placed:
        i0, j0 = max(-(-lb.x // c), 0), max(-(-lb.y // c), 0)
        i1, j1 = min((lb.x + lb.width) // c, n), min((lb.y + lb.height) // c, n)
        if i1 > i0 and j1 > j0:
            grid[j0:j1, i0:i1] = 1
    sat = np.zeros((n + 1, n + 1), dtype=np.int32)
    # int32 throughout (at most n * n), along rows first (contiguous): exact integer sums
    np.cumsum(grid.cumsum(axis=1, dtype=np.int32), axis=0, dtype=np.int32, out=sat[1:, 1:])
    corners = polys.reshape(-1, 4, 2)
    lo = np.concatenate(
        [np.stack([xs, ys], axis=1), np.floor(corners.min(axis=1)).astype(np.int64)]
    )
    hi = np.concatenate(
        [
            np.stack([xs + dims, ys + dims], axis=1),
            np.ceil(corners.max(axis=1)).astype(np.int64) + 1,
        ]
    )
    # cells holding output pixels lo // ss .. (hi - 1) // ss
    c0, c1 = (lo // ss) // c, ((hi - 1) // ss) // c + 1
    inside = (c0 >= 0).all(axis=1) & (c1 <= n).all(axis=1)
    c0, c1 = np.minimum(np.maximum(c0, 0), n), np.minimum(np.maximum(c1, 0), n)
    ci0, cj0, ci1, cj1 = c0[:, 0], c0[:, 1], c1[:, 0], c1[:, 1]
    count = sat[cj1, ci1] - sat[cj0, ci1] - sat[cj1, ci0] + sat[cj0, ci0]
    whole = inside & (count == (ci1 - ci0) * (cj1 - cj0))
    return whole[prim]

"""What a supersampled drawing touches, and its downsampling limited to that.

The rasteriser draws only the rows that hold primitives or labels and downsamples only the
columns they can touch (whole supersampling blocks); every other pixel of the picture is black.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image


def downsample(
    image, ss: int, size: int, xs, dims, polys: np.ndarray, top: int | None, rows: int | None = None
):
    """The drawing downsampled by ``ss`` (box filter): its rows only (``top`` None), or a
    ``size`` px wide picture ``rows`` tall (default ``size``: the whole picture) with them from
    row ``top`` on. Only the columns that primitives can touch are computed (whole ``ss``
    blocks; every other column is black)."""
    width, height = image.size
    lo, hi = span(xs, dims, polys[:, 0::2] if len(polys) else polys, width, ss)
    if ss == 1:
        lo, hi = 0, width
    rows = height // ss if top is None else (size if rows is None else rows)
    if lo == 0 and hi == width and (top is None or (top == 0 and rows * ss == height)):
        return image.reduce(ss) if ss > 1 else image
    out = Image.new("RGB", (size, rows), (0, 0, 0))
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

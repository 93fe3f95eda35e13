"""Our PNG writer: 8-bit RGB (or grey / RGBA), every scanline with filter type 0, one IDAT chunk
compressed by libdeflate (the ``deflate`` package) at a fixed level.

Why not Pillow's encoder: the pictures are mostly black background with flat colours and text, so
PNG's prediction filters (which Pillow applies per row) make them *harder* to compress. Filter
type 0 with libdeflate at :data:`PNG_DEFLATE_LEVEL` stores the same pixels in about 27 % fewer
bytes and encodes about twice as fast as Pillow at ``compress_level=1`` (measured in
``scripts/bench_bytes.py`` and ``bench_render.py``; docs/scale.md). The output is a
standard PNG (signature, IHDR, IDAT, IEND with their CRCs) that every decoder reads back to the
same pixels; the bytes are fixed by the pixels, the level and the libdeflate release bundled with
the pinned ``deflate`` package (:data:`PNG_ENCODER`, part of the build's identity).
"""

from __future__ import annotations

import struct
import zlib

import deflate
import numpy as np

#: libdeflate compression level (1-12), at the knee of the size/time curve for these pictures
#: (docs/measurements.md, "Round four"): level 5 stores about 1 % more bytes than level 6 in
#: 16-22 % less encoding time (the largest single cost of a picture); level 4 3 % more bytes for
#: at most 5 % less time again; levels 7-9 save under 0.5 % at up to 3x the time. Builders 0.6.0
#: to 0.8.0 before render version 7 used level 6.
PNG_DEFLATE_LEVEL = 5

#: The encoder's identity, recorded in the build configuration (its hash names the build).
PNG_ENCODER = f"png filter 0, libdeflate level {PNG_DEFLATE_LEVEL}"

#: The eight bytes every PNG file starts with.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Pillow mode -> (PNG colour type, channels).
_COLOUR_TYPES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png_bytes(pixels: np.ndarray) -> bytes:
    """PNG bytes of ``pixels``: uint8, (H, W, 3) RGB, (H, W, 4) RGBA or (H, W) grey."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8:
        raise ValueError(f"png_bytes needs uint8 pixels, got {pixels.dtype}")
    if pixels.ndim == 2:
        colour_type, channels = 0, 1
    elif pixels.ndim == 3 and pixels.shape[2] in (3, 4):
        colour_type, channels = (2, 3) if pixels.shape[2] == 3 else (6, 4)
    else:
        raise ValueError(
            f"png_bytes needs (H, W), (H, W, 3) or (H, W, 4) pixels, got {pixels.shape}"
        )
    height, width = pixels.shape[:2]
    if height == 0 or width == 0:
        raise ValueError(f"png_bytes needs a non-empty picture, got {width} x {height}")
    scanlines = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # column 0: filter 0
    scanlines[:, 1:] = pixels.reshape(height, width * channels)
    return _png(scanlines.data, width, height, colour_type)


def encode_image(image, level: int = PNG_DEFLATE_LEVEL) -> bytes:
    """PNG bytes of a Pillow image of mode L, RGB or RGBA (other modes: ``ValueError``): the
    bytes of :func:`png_bytes` of its pixels (:func:`encode_rows` of all its rows). ``level``:
    another libdeflate level, for comparisons (``dataset.footprint.CODECS``)."""
    return encode_rows(image, 0, image.size[1], level)


def encode_rows(band, top: int, height: int, level: int = PNG_DEFLATE_LEVEL) -> bytes:
    """PNG bytes of a ``band.width`` px wide picture ``height`` rows tall whose rows ``top ..
    top + band.height`` are the Pillow image ``band`` (mode L, RGB or RGBA) and whose other
    rows are black (``raster.render_rows``): the bytes :func:`encode_image` gives the whole
    picture, without making it (the black rows' scanlines are zero bytes).

    The band's scanlines come straight from Pillow's raw packer with a stride of one byte more
    than a row, which leaves a zero byte after each packed row; one zero byte in front makes
    them PNG scanlines of filter type 0 (one copy of the pixels, where numpy's view of the
    image and a scanline array took two and a zero fill)."""
    if band.mode not in _COLOUR_TYPES:
        raise ValueError(f"cannot encode a Pillow image of mode {band.mode!r} (L, RGB or RGBA)")
    colour_type, channels = _COLOUR_TYPES[band.mode]
    width, rows = band.size
    if width == 0 or height <= 0:
        raise ValueError(f"png_bytes needs a non-empty picture, got {width} x {height}")
    if top < 0 or top + rows > height:
        raise ValueError(f"rows {top} .. {top + rows} do not lie in a picture {height} rows tall")
    stride = width * channels + 1
    parts = [bytes(top * stride)]
    if rows:
        parts += [b"\x00", memoryview(band.tobytes("raw", band.mode, stride))[:-1]]
    parts.append(bytes((height - top - rows) * stride))
    return _png(b"".join(parts), width, height, colour_type, level)


def _png(
    scanlines, width: int, height: int, colour_type: int, level: int = PNG_DEFLATE_LEVEL
) -> bytes:
    """The PNG file of filtered ``scanlines`` (a bytes-like object)."""
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    compressed = deflate.zlib_compress(scanlines, level)
    return (
        PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", compressed) + _chunk(b"IEND", b"")
    )

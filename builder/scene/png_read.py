"""A fast reader for the PNGs our writer makes (``png.png_bytes``: 8-bit RGB, every scanline
with filter type 0, not interlaced): the audit decodes every stored picture of a split.

:func:`read_png` checks the signature, each chunk's CRC and the zlib stream's checksum (libdeflate
verifies it), inflates the image data in one call of known size and drops the filter bytes. Any
other PNG (another colour type or bit depth, interlacing, a filtered scanline, a chunk it does not
expect) gives ``None``, and the caller decodes it with Pillow: the pixels are the same either way
(``tests/test_batch.py``).
"""

from __future__ import annotations

import struct
import zlib

import deflate
import numpy as np

from .png import PNG_SIGNATURE

#: Ancillary chunks that do not change the pixels of an RGB picture without gamma handling.
_SKIP = frozenset({b"tEXt", b"zTXt", b"iTXt", b"pHYs", b"tIME"})


def read_png(data: bytes) -> np.ndarray | None:
    """(H, W, 3) uint8 pixels of an 8-bit RGB PNG whose scanlines all use filter 0, else None
    (also for a damaged file: the caller's decoder then reports it)."""
    if not data.startswith(PNG_SIGNATURE):
        return None
    at, size, idat = len(PNG_SIGNATURE), None, []
    view = memoryview(data)
    while at + 12 <= len(data):
        (length,) = struct.unpack_from(">I", data, at)
        tag = bytes(view[at + 4 : at + 8])
        end = at + 8 + length
        if end + 4 > len(data):
            return None
        body = view[at + 8 : end]
        if zlib.crc32(view[at + 4 : end]) != struct.unpack_from(">I", data, end)[0]:
            return None
        if tag == b"IHDR":
            width, height, depth, colour, comp, filt, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, colour, comp, filt, interlace) != (8, 2, 0, 0, 0) or not width * height:
                return None
            size = (height, width)
        elif tag == b"IDAT" and size is not None:
            idat.append(body)
        elif tag == b"IEND":
            break
        elif tag not in _SKIP:
            return None
        at = end + 4
    if size is None or not idat:
        return None
    height, width = size
    try:
        raw = deflate.zlib_decompress(b"".join(idat), height * (1 + 3 * width))
    except deflate.DeflateError:
        return None
    if len(raw) != height * (1 + 3 * width):
        return None
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + 3 * width)
    if rows[:, 0].any():
        return None
    return rows[:, 1:].reshape(height, width, 3)

"""PNG encoding and the render cache: one request -> PNG bytes, each distinct request once.

The encoder is ours (:mod:`.png`, fixed settings :data:`.png.PNG_ENCODER`), so the same request
gives the same bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from PIL import Image

from ..core.records import Complex
from .png import encode_image, encode_rows
from .raster import render_rows
from .requests import RenderRequest


def encode_png(image: Image.Image) -> bytes:
    """PNG bytes of a Pillow image with the fixed encoder settings (:func:`.png.encode_image`)."""
    return encode_image(image)


def render_png(complex_: Complex, request: RenderRequest) -> bytes:
    """Render a request to PNG bytes (deterministic: equal requests give identical bytes): the
    bytes of :func:`encode_png` of its ``render_image``, encoded from the rows that hold
    something (``raster.render_rows``) without making the whole picture."""
    band, top = render_rows(complex_, request)
    return encode_rows(band, top, int(request.camera.size))


def _nbytes(data: object) -> int:
    return len(data) if isinstance(data, (bytes, bytearray)) else int(getattr(data, "nbytes", 0))


class RenderCache:
    """Render each distinct (complex, request) once and share the bytes.

    The key is the complex's identity (``pdb_id``, ``ligand_code``, ``source``) plus the request.
    Least recently used entries are dropped beyond ``max_bytes`` (a full build renders hundreds
    of thousands of images; the cache only needs to cover the questions of one complex).
    ``render`` (default :func:`render_png`) makes the stored value of a request; the audit keeps
    decoded pixel arrays instead of PNG bytes.
    """

    def __init__(
        self,
        max_bytes: int = 512 * 1024 * 1024,
        render: Callable[[Complex, RenderRequest], object] | None = None,
    ):
        self.max_bytes = int(max_bytes)
        self._render = render_png if render is None else render
        self.hits = 0
        self.misses = 0
        self._store: OrderedDict[tuple, bytes] = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(complex_: Complex, request: RenderRequest) -> tuple:
        return (complex_.pdb_id, complex_.ligand_code, complex_.source, request)

    def get(self, complex_: Complex, request: RenderRequest) -> bytes:
        key = self.key(complex_, request)
        data = self._store.get(key)
        if data is not None:
            self.hits += 1
            self._store.move_to_end(key)
            return data
        self.misses += 1
        data = self._render(complex_, request)
        self._store[key] = data
        self._bytes += _nbytes(data)
        while self._bytes > self.max_bytes and len(self._store) > 1:
            _, old = self._store.popitem(last=False)
            self._bytes -= _nbytes(old)
        return data

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, item: tuple[Complex, RenderRequest]) -> bool:
        return self.key(*item) in self._store

    def clear(self) -> None:
        self._store.clear()
        self._bytes = 0

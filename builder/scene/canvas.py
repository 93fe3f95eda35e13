"""The supersampled canvas of the rasteriser (``raster``) and its two drawing primitives."""

from __future__ import annotations

from PIL import Image, ImageDraw

from .pillow_core import core_objects, use_core
from .shading import Sprite


class Canvas:
    """The supersampled picture plus the two drawing primitives (sprite paste, polygon fill).

    Thousands of primitives are drawn per picture, so the calls go straight to Pillow's C
    objects (``Image.im`` and ``ImageDraw.Draw(...).draw``, which Pillow's own ``paste`` and
    ``polygon`` call with the same arguments) where :func:`.pillow_core.use_core` allows;
    otherwise the public methods are used instead, with the same pixels.
    """

    def __init__(self, width: int, height: int | None = None):
        self.image = Image.new("RGB", (width, width if height is None else height), (0, 0, 0))
        public = ImageDraw.Draw(self.image)
        self._inks: dict[tuple[int, int, int], object] = {}
        if use_core():
            self._core, self._draw_core = core_objects(self.image, public)
        else:  # the public API (tested: same bytes)
            self._core = self._draw_core = None
            self._public = public

    def ink(self, rgb: tuple[int, int, int]) -> object:
        ink = self._inks.get(rgb)
        if ink is None:
            ink = self._draw_core.draw_ink(rgb) if self._draw_core is not None else rgb
            self._inks[rgb] = ink
        return ink

    def sprite_paster(self):
        """``paste(sprite, x, y)``: paste a cached sprite with its top-left corner at (x, y)."""
        if self._core is not None:
            core_paste = self._core.paste

            def paste(sprite: Sprite, x: int, y: int) -> None:
                core_paste(sprite.core, (x, y, x + sprite.width, y + sprite.height), sprite.core)
        else:  # pragma: no cover
            image = self.image

            def paste(sprite: Sprite, x: int, y: int) -> None:
                image.paste(sprite.image, (x, y), sprite.image)

        return paste

    def polygon_filler(self):
        """``fill(points, ink)``: fill a polygon given as a flat coordinate list."""
        if self._draw_core is not None:
            core_polygon = self._draw_core.draw_polygon

            def fill(points: list[float], ink: object) -> None:
                core_polygon(points, ink, 1)
        else:  # pragma: no cover
            public = self._public

            def fill(points: list[float], ink: object) -> None:
                public.polygon(points, fill=ink)

        return fill

"""The one place that reaches into Pillow's C objects, and the supported Pillow range.

The renderer draws thousands of sprites and polygons per picture, so its hot loops call Pillow's
core objects directly (``Image.im.paste``, ``ImageDraw.Draw(...).draw.draw_polygon`` and
``draw_ink``), the calls Pillow's own ``Image.paste`` and ``ImageDraw.polygon`` make with the same
arguments. Those objects are not Pillow's public API, so every use goes through this module:
:data:`USE_CORE` says whether this Pillow has them (probed once, on first use), and when it does
not (or ``MISI_BENCH_PILLOW_PUBLIC=1`` asks for it) the helpers below fall back to the public
methods, which give the same pixels, hence the same PNG bytes (tested).

The dataset promises byte-identical images, so the Pillow release matters too: the supported
range is :data:`SUPPORTED_PILLOW` (the pin in pyproject.toml); :func:`check_pillow` refuses to
render outside it with a message that says what to install, and the build's manifest records the
versions (:func:`image_library_versions`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache

from PIL import Image, ImageDraw

from ..core.errors import RenderError

#: Pillow releases whose drawing the renderer is checked against: ``(lowest, first excluded)``
#: major.minor, the same range as the ``pillow`` pin of pyproject.toml.
SUPPORTED_PILLOW = ((10, 1), (14, 0))
#: Set to 1 to draw through Pillow's public API only (slower, same pixels).
PUBLIC_ENV = "MISI_BENCH_PILLOW_PUBLIC"


def _release(version: str) -> tuple[int, int]:
    parts = (version.split(".") + ["0"])[:2]
    return tuple(int("".join(ch for ch in p if ch.isdigit()) or 0) for p in parts)


def check_pillow(version: str | None = None) -> None:
    """Raise :class:`RenderError` when the Pillow release is outside :data:`SUPPORTED_PILLOW`.

    >>> check_pillow("11.3.0")
    >>> check_pillow("9.5.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    misi_bench.builder.core.errors.RenderError: Pillow 9.5.0 is outside the supported range ...
    """
    import PIL

    version = PIL.__version__ if version is None else version
    low, high = SUPPORTED_PILLOW
    if not low <= _release(version) < high:
        raise RenderError(
            f"Pillow {version} is outside the supported range >={low[0]}.{low[1]},"
            f"<{high[0]}.{high[1]} (pyproject.toml): the images are only promised byte-identical "
            f'there; install a supported release, e.g. pip install "pillow>={low[0]}.{low[1]},'
            f'<{high[0]}.{high[1]}"'
        )


@lru_cache(maxsize=1)
def use_core() -> bool:
    """Whether the renderer may call Pillow's core objects (checked once, after the release)."""
    check_pillow()
    if os.environ.get(PUBLIC_ENV, "") not in ("", "0"):
        return False
    probe = Image.new("RGB", (1, 1))
    core, draw_core = getattr(probe, "im", None), getattr(ImageDraw.Draw(probe), "draw", None)
    return all(
        callable(getattr(obj, name, None))
        for obj, name in ((core, "paste"), (draw_core, "draw_polygon"), (draw_core, "draw_ink"))
    )


def core_objects(image: Image.Image, draw: ImageDraw.ImageDraw) -> tuple[object, object]:
    """``(image.im, draw.draw)``: the core image and core drawer, for callers that drive them
    in bulk; only when :func:`use_core` is true."""
    if not use_core():
        raise RenderError("Pillow's core objects are not in use (see use_core)")
    return image.im, draw.draw


def handle(image: Image.Image) -> object:
    """What the painters below take as a source or mask: the core image on the fast path, else
    the image itself."""
    return image.im if use_core() else image


def painter(image: Image.Image) -> Callable[[object, tuple, object], None]:
    """``paste(source, box, mask)`` onto ``image``: ``source`` a :func:`handle` or a colour,
    ``box`` the 4-tuple the source covers, ``mask`` a :func:`handle` (``Image.paste``'s
    semantics)."""
    if use_core():
        return image.im.paste
    paste = image.paste

    def public(source, box, mask) -> None:
        paste(source, tuple(box), mask)

    return public


def copier(image: Image.Image) -> Callable[[object, tuple], None]:
    """``copy(source, box)`` onto ``image``: ``source`` a :func:`handle` of an image of
    ``image``'s mode, copied over the 4-tuple ``box`` (``Image.paste`` without a mask)."""
    if use_core():
        return image.im.paste
    paste = image.paste

    def public(source, box) -> None:
        paste(source, tuple(box))

    return public


def mask_painters(image: Image.Image) -> tuple[Callable, Callable]:
    """``(line(xy, width), disc(xy))`` drawing ink 1 on ``image`` (a mask): what
    ``ImageDraw.line(xy, fill=1, width=width)`` (``width`` >= 1) and
    ``ImageDraw.ellipse(xy, fill=1)`` draw, through the core drawer's ``draw_lines`` and
    ``draw_ellipse`` (the calls those methods make) on the fast path."""
    draw = ImageDraw.Draw(image)
    if not use_core():
        return (
            lambda xy, width: draw.line(xy, fill=1, width=width),
            lambda xy: draw.ellipse(xy, fill=1),
        )
    core = draw.draw
    ink = core.draw_ink(1)
    return (
        lambda xy, width: core.draw_lines(xy, ink, width),
        lambda xy: core.draw_ellipse(xy, ink, 1),
    )


def polygon_filler(image: Image.Image) -> Callable[[list, object, int], None]:
    """``fill(points, ink, 1)``: fill a polygon (flat coordinate list) with an :func:`ink`."""
    draw = ImageDraw.Draw(image)
    if use_core():
        return draw.draw.draw_polygon

    def public(points, ink, _fill=1) -> None:
        draw.polygon(points, fill=_rgb(ink))

    return public


def ink(rgb: tuple[int, int, int]) -> int:
    """The ink of an RGB colour as an int: Pillow's packed pixel on the fast path, else
    ``0xRRGGBB`` (the public filler unpacks it)."""
    if use_core():
        return _core_ink(tuple(rgb))
    r, g, b = rgb
    return (r << 16) | (g << 8) | b


@lru_cache(maxsize=1)
def _ink_draw():
    return ImageDraw.Draw(Image.new("RGB", (1, 1))).draw


def _core_ink(rgb: tuple[int, int, int]) -> int:
    return _ink_draw().draw_ink(rgb)


def _rgb(ink: int) -> tuple[int, int, int]:
    return ((ink >> 16) & 255, (ink >> 8) & 255, ink & 255)


def image_library_versions() -> dict[str, str]:
    """The releases that fix the image bytes: Pillow (drawing, text) and ``deflate`` (the
    libdeflate release bundled with it, our PNG writer), for the build's manifest."""
    import deflate
    import PIL

    return {"pillow": PIL.__version__, "deflate": getattr(deflate, "__version__", "unknown")}

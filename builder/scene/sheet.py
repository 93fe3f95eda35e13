"""Contact sheets: a grid of views of one complex with captions (``misi-bench preview``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw

from ..core.constants import DEFAULT_IMAGE_SIZE
from ..core.errors import RenderError
from ..core.records import Complex
from ..operations.transforms import VIEW_NAMES
from .cache import encode_png
from .camera import Camera, fit_camera
from .labels import font
from .projection import check_atoms
from .raster import render_image
from .requests import Group, RenderRequest, Style


def scene_camera(
    complex_: Complex, atoms: Iterable[int] | None = None, size: int = DEFAULT_IMAGE_SIZE
) -> Camera:
    """The fitted camera of a scene (``camera.fit_camera`` of the shown atoms' screen coords)."""
    idx = np.arange(complex_.n_atoms) if atoms is None else check_atoms(complex_, list(atoms))
    if idx.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    return fit_camera(complex_.screen_coords[idx], size=size)


def contact_sheet(
    complex_: Complex,
    views: Sequence[str] = VIEW_NAMES,
    size: int = DEFAULT_IMAGE_SIZE,
    columns: int = 3,
    atoms: Iterable[int] | None = None,
    groups: tuple[Group, ...] = (),
    style: Style | None = None,
    camera: Camera | None = None,
) -> bytes:
    """PNG grid of ``views`` (default: the six views), each tile ``size`` px with its view name
    as a caption. Atoms default to the whole complex (pocket + ligand), the camera to the fitted
    one (a given camera is used at ``size`` px); ``misi-bench preview`` is this function."""
    idx = tuple(range(complex_.n_atoms)) if atoms is None else tuple(int(i) for i in atoms)
    style = Style() if style is None else style
    style.validate()
    if not views:
        raise RenderError("contact sheet: no views given")
    camera = (
        scene_camera(complex_, idx, size)
        if camera is None
        else dataclasses.replace(camera, size=size)
    )
    columns = max(1, min(int(columns), len(views)))
    rows = (len(views) + columns - 1) // columns
    caption = max(14, size // 16)
    sheet = Image.new("RGB", (columns * size, rows * (size + caption)), (0, 0, 0))
    caption_font = font(max(8, int(caption * 0.7)))
    draw = ImageDraw.Draw(sheet)
    for n, view in enumerate(views):
        request = RenderRequest(atoms=idx, camera=camera, groups=groups, view=view, style=style)
        tile = render_image(complex_, request)
        x, y = (n % columns) * size, (n // columns) * (size + caption)
        draw.rectangle((x, y, x + size - 1, y + caption - 1), fill=(40, 40, 40))
        draw.text(
            (x + size / 2.0, y + caption / 2.0),
            view,
            font=caption_font,
            fill=(255, 255, 255),
            anchor="mm",
        )
        sheet.paste(tile, (x, y + caption))
        draw.rectangle((x, y + caption, x + size - 1, y + caption + size - 1), outline=(60, 60, 60))
    return encode_png(sheet)

"""Text labels drawn on top of a rendered picture (Pillow's bundled font, no system fonts).

Pocket residue labels (``ASN 460``) sit above the residue's CA (else the centre of its shown
atoms), ligand atom names next to each ligand atom, or (``label_mode="residue_atoms"``) the atom
names of the shown residue atoms. Each label is its coloured glyphs inside a 1-px black outline.
The font size is ``Style.label_px`` at :data:`REFERENCE_IMAGE_SIZE` px, scaled with the image.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..core.constants import REFERENCE_IMAGE_SIZE
from .requests import LIGAND_LABEL_COLOUR, POCKET_CARBONS, Style

#: Smallest label font size in pixels, whatever the image size.
MIN_LABEL_PX = 6


def label_px(style: Style, size: int) -> int:
    """Label font size in pixels for an image ``size`` px wide."""
    return max(MIN_LABEL_PX, int(round(style.label_px * size / float(REFERENCE_IMAGE_SIZE))))


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except (TypeError, ImportError, OSError):  # pragma: no cover - Pillow without FreeType
        return ImageFont.load_default()


@lru_cache(maxsize=16384)
def label_sprite(text: str, px: int, colour: tuple[int, int, int]) -> tuple[object, int, int]:
    """(RGBA core image, width, height) of a label: coloured glyphs inside a 1-px black outline
    (keeps labels legible over sticks), pasted in one call."""
    outline, glyph, width, height = label_masks(text, px)
    rgba = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    rgba.im.paste((0, 0, 0, 255), (0, 0, width, height), outline)
    rgba.im.paste(colour + (255,), (0, 0, width, height), glyph)
    rgba.load()
    return rgba.im, width, height


@lru_cache(maxsize=16384)
def label_masks(text: str, px: int) -> tuple[object, object, int, int]:
    """(outline mask, glyph mask, width, height) of a label, masks as Pillow core images (for
    ``ImagingCore.paste``)."""
    face = font(px)
    left, top, right, bottom = face.getbbox(text)
    width, height = int(right - left) + 4, int(bottom - top) + 4
    glyph = Image.new("L", (width, height), 0)
    ImageDraw.Draw(glyph).text((2 - left, 2 - top), text, font=face, fill=255)
    outline = Image.new("L", (width, height), 0)
    try:
        ImageDraw.Draw(outline).text((2 - left, 2 - top), text, font=face, fill=255, stroke_width=1)
    except (TypeError, ValueError):  # pragma: no cover - bitmap font without stroke support
        outline = glyph
    glyph.load()
    outline.load()
    return outline.im, glyph.im, width, height


def draw_labels(image, complex_, atoms, u, v, alive, depth, radius_px, style) -> None:
    size = image.size[0]
    px = label_px(style, size)
    inside = alive & (u >= 0) & (u < size) & (v >= 0) & (v < size)
    ligand = complex_.is_ligand[atoms]
    entries: list[tuple[int, float, float, float, str, tuple[int, int, int], bool]] = []
    # (layer, depth, u, v, text, colour, centred)
    if style.label_mode == "standard":
        # One label per shown residue, centred above its CA (else above the centre of its
        # shown atoms), in the residue's carbon colour, lightened.
        res_idx = complex_.residue_index[atoms]
        pocket = ~ligand & alive & (res_idx >= 0)
        rows = np.flatnonzero(pocket)
        if rows.size:
            residues, first = np.unique(res_idx[rows], return_index=True)
            slot = np.searchsorted(residues, res_idx[rows])
            count = np.bincount(slot, minlength=residues.size).astype(np.float64)
            lu = np.bincount(slot, weights=u[rows], minlength=residues.size) / count
            lv = np.bincount(slot, weights=v[rows], minlength=residues.size) / count
            ld = np.bincount(slot, weights=depth[rows], minlength=residues.size) / count
            ca_rows = rows[complex_.atom_names[atoms[rows]] == "CA"]
            if ca_rows.size:
                ca_res, ca_first = np.unique(res_idx[ca_rows], return_index=True)
                ca_k = ca_rows[ca_first]
                where = np.searchsorted(residues, ca_res)
                lu[where], lv[where], ld[where] = u[ca_k], v[ca_k], depth[ca_k]
            keep = (lu >= 0) & (lu < size) & (lv >= 0) & (lv < size)
            for r, x, y, d in zip(residues[keep].tolist(), lu[keep].tolist(), lv[keep].tolist(), ld[keep].tolist()):
                entries.append((0, d, x, y, complex_.residues[r].label, RESIDUE_LABEL_COLOURS[r % 2], True))
    elif style.label_mode == "residue_atoms":
        res_idx = complex_.residue_index[atoms]
        for k in np.flatnonzero(~ligand & inside).tolist():
            r = int(res_idx[k])
            colour = RESIDUE_LABEL_COLOURS[r % 2] if r >= 0 else LIGAND_LABEL_COLOUR
            entries.append((0, float(depth[k]), float(u[k]) + float(radius_px[k]), float(v[k]), str(complex_.atom_names[atoms[k]]), colour, False))
    for k in np.flatnonzero(ligand & inside).tolist():
        entries.append((1, float(depth[k]), float(u[k]) + float(radius_px[k]), float(v[k]), str(complex_.atom_names[atoms[k]]), LIGAND_LABEL_COLOUR, False))
    # Residue labels under ligand labels; within a layer far to near (ties: text, position).
    entries.sort(key=lambda e: (e[0], -e[1], e[4], e[2], e[3]))
    core = image.im
    for _, _, lu, lv, text, colour, centred in entries:
        if not text:
            continue
        sprite, w, h = label_sprite(text, px, colour)
        if centred:
            x, y = int(round(lu - w / 2.0)), int(round(lv - h - 2))
        else:
            x, y = int(round(lu + 1)), int(round(lv - h / 2.0))
        core.paste(sprite, (x, y, x + w, y + h), sprite)


def lightened(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(round(c + (255 - c) * 0.35)) for c in rgb)  # type: ignore[return-value]


RESIDUE_LABEL_COLOURS = (lightened(POCKET_CARBONS[0]), lightened(POCKET_CARBONS[1]))

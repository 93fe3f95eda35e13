"""Text labels drawn on top of a rendered picture (Pillow's bundled font, no system fonts).

Pocket residue labels (``ASN 460``) sit above the residue's CA (else the centre of its shown
atoms), ligand atom names next to each ligand atom, or (``label_mode="residue_atoms"``) the atom
names of the shown residue atoms. Each label is its coloured glyphs inside a 1-px black outline.
Placement is collision-aware (:func:`layout_labels`): a label moves to a free slot around its
atom when its default slot is taken, so that labels near the ligand stay readable in crowded
pockets (the audit measures this as the legibility of H-bond answer labels).
The font size is ``Style.label_px`` at :data:`REFERENCE_IMAGE_SIZE` px, scaled with the image.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..core.constants import REFERENCE_IMAGE_SIZE
from .free_space import FreeSpace
from .layout import (
    BOND_REACH,
    SLOTS,
    chain_caption_spot,
    draw_leaders,
    footprint_rows,
    ligand_bonds,
    ligand_footprint,
    order_distance,
    picture_reach,
    residue_text,
    shown_chains,
)
from .pillow_core import copier, handle, painter
from .placement import LABEL_GAP, PlacedLabel, place_labels, take_clipped
from .requests import LIGAND_LABEL_COLOUR, POCKET_CARBONS, Style

#: Opacity (0-255) of the dark panel behind each label's text: sticks under a label are dimmed
#: to a quarter of their brightness, so that the text stands out from them (and stay visible).
PANEL_ALPHA = 255
#: Colour of the chain caption of a one-chain pocket picture (``chain E``): near-white, apart
#: from the two residue label colours.
CAPTION_COLOUR = (0xE6, 0xE6, 0xE6)
#: Smallest label font size in pixels, whatever the image size.
MIN_LABEL_PX = 6


def label_px(style: Style, size: int) -> int:
    """Label font size in pixels for an image ``size`` px wide: proportional to the size up to
    :data:`REFERENCE_IMAGE_SIZE`, then with its square root (``--image-size 1024`` gives labels
    1.41 times as tall in a picture twice as wide, so larger pictures have room between them)."""
    scale = size / float(REFERENCE_IMAGE_SIZE)
    if scale > 1:
        scale = scale**0.5
    return max(MIN_LABEL_PX, int(round(style.label_px * scale)))


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except (TypeError, ImportError, OSError):  # pragma: no cover - Pillow without FreeType
        return ImageFont.load_default()


@lru_cache(maxsize=16384)
def label_sprite(text: str, px: int, colour: tuple[int, int, int]) -> tuple[object, int, int]:
    """(RGBA :func:`~.pillow_core.handle`, width, height) of a label: coloured glyphs inside a
    1-px black outline on a dark panel (:data:`PANEL_ALPHA`; keeps labels legible over
    sticks), pasted in one call."""
    outline, glyph, width, height = label_masks(text, px)
    rgba = Image.new("RGBA", (width, height), (0, 0, 0, PANEL_ALPHA))
    paint = painter(rgba)
    paint((0, 0, 0, 255), (0, 0, width, height), outline)
    paint(colour + (255,), (0, 0, width, height), glyph)
    rgba.load()
    return handle(rgba), width, height


@lru_cache(maxsize=16384)
def _opaque_sprite(text: str, px: int, colour: tuple[int, int, int]) -> tuple[object, int, int]:
    """:func:`label_sprite` as RGB (every pixel of a sprite is opaque when
    :data:`PANEL_ALPHA` is 255: pasting it with its own alpha as the mask gives its RGB)."""
    outline, glyph, width, height = label_masks(text, px)
    rgba = Image.new("RGBA", (width, height), (0, 0, 0, PANEL_ALPHA))
    paint = painter(rgba)
    paint((0, 0, 0, 255), (0, 0, width, height), outline)
    paint(colour + (255,), (0, 0, width, height), glyph)
    rgb = rgba.convert("RGB")
    rgb.load()
    return handle(rgb), width, height


def label_size(text: str, px: int) -> tuple[int, int]:
    """(width, height) px of a label's sprite (any colour), without making the sprite."""
    return _label_images(text, px)[2:]


def label_masks(text: str, px: int) -> tuple[object, object, int, int]:
    """(outline mask, glyph mask, width, height) of a label, masks as
    :func:`~.pillow_core.handle` (for :func:`~.pillow_core.painter`)."""
    outline, glyph, width, height = _label_images(text, px)
    return handle(outline), handle(glyph), width, height


@lru_cache(maxsize=16384)
def _label_images(text: str, px: int) -> tuple[Image.Image, Image.Image, int, int]:
    """(outline mask, glyph mask, width, height) of a label as Pillow "L" images."""
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
    return outline, glyph, width, height


_POLAR = frozenset({"N", "O", "S"})


@dataclass(frozen=True, eq=False)
class LabelAtoms:
    """What the labels of a picture need from its atom selection, independent of the pose:
    per position in ``atoms``, whether it is a ligand atom, its residue index, its distance (Å)
    to the nearest shown ligand atom in the input frame (inf when none is shown), whether it is
    a CA, its atom name and whether it is polar (N, O, S); the (M, 2) positions of the bonds
    between shown ligand atoms; whether the shown residues belong to more than one chain; the
    positions of every shown bond.
    ``raster`` keeps one per selection."""

    atoms: np.ndarray
    ligand: np.ndarray
    res_idx: np.ndarray
    near: np.ndarray
    is_ca: np.ndarray
    names: tuple[str, ...]
    polar: tuple[bool, ...]
    ligand_bonds: np.ndarray
    chains: bool
    bonds: np.ndarray
    chain_ids: tuple[str, ...] = ()

    @cached_property
    def residue_groups(self) -> tuple:
        """``(rows, *labels._residue_groups(rows))`` of every residue atom of the selection
        (what a picture that draws them all uses; made on first use)."""
        rows = np.flatnonzero(~self.ligand & (self.res_idx >= 0))
        return (rows, *_residue_groups(self, rows))

    @cached_property
    def texts(self) -> dict[tuple[int, bool], str]:
        """Residue label texts made so far, by (residue index, chain shown)."""
        return {}


def label_atoms(complex_, atoms: np.ndarray) -> LabelAtoms:
    """The :class:`LabelAtoms` of a selection (``atoms``: complex atom indices)."""
    atoms = np.asarray(atoms, dtype=np.int64)
    names = complex_.atom_names[atoms]
    elements = complex_.elements[atoms]
    chain_ids = shown_chains(complex_, atoms)
    return LabelAtoms(
        atoms,
        complex_.is_ligand[atoms],
        complex_.residue_index[atoms],
        _ligand_distance(complex_, atoms, np.arange(atoms.size)),
        names == "CA",
        tuple(str(n) for n in names.tolist()),
        tuple(str(e).strip().upper() in _POLAR for e in elements.tolist()),
        ligand_bonds(complex_, atoms),
        len(chain_ids) > 1,
        ligand_bonds(complex_, atoms, ligand_only=False),
        chain_ids,
    )


def _ligand_distance(complex_, atoms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Distance (Å) from each atom at ``rows`` of ``atoms`` to the nearest shown ligand atom
    (inf when no ligand atom is shown). Each row's value is computed on its own, so a subset of
    rows gets the values of the whole selection at those rows."""
    ligand = atoms[complex_.is_ligand[atoms]]
    if ligand.size == 0 or rows.size == 0:
        return np.full(rows.size, np.inf)
    xyz = complex_.coords[atoms[rows]]
    lig = complex_.coords[ligand]
    return np.sqrt(((xyz[:, None, :] - lig[None, :, :]) ** 2).sum(axis=2)).min(axis=1)


def _atom_entries(
    la: LabelAtoms, rows, layer, ranks, u, v, depth, radius_px, colours, picture=None
) -> list:
    """Layout entries of the atom names at ``rows``: polar atoms (N, O, S) first, then by
    ``ranks`` (depth or distance to the ligand). Tier (``avoid``, ``leader``): ligand polar atoms
    0, residue polar atoms in :data:`BOND_REACH` of the ligand 1 (``leader``: in the picture,
    ``picture``), other ligand atoms 2, the rest 3."""
    out = []
    atoms, names, polar = la.atoms, la.names, la.polar
    reach, near = order_distance(la, rows, u, v, picture)
    near = dict(zip(np.asarray(rows, dtype=np.int64).tolist(), near.tolist()))
    for k, rank, colour in zip(rows, ranks, colours):
        atom = int(atoms[k])
        text = names[k]
        uk, y, rk = float(u[k]), float(v[k]), float(radius_px[k])
        if layer == 0:
            tier = 0 if polar[k] else 2
        else:
            tier = 1 if polar[k] and near[k] <= reach else 3
        out.append(
            [
                (tier, layer, 0 if polar[k] else 1, rank, atom),
                (1 - layer, -float(depth[k]), text, uk + rk, y),
                uk,
                y,
                rk,
                text,
                colour,
                False,
                ("atom", atom),
            ]
        )
    return out


def _residue_groups(la: LabelAtoms, rows: np.ndarray) -> tuple:
    """The residues of the residue atoms at ``rows`` of a selection: ``(residues, slot, count,
    near, ca_k, where)``: the residue indices (sorted), each row's place among them, the atoms
    per residue, each residue's least distance to the ligand, and the rows of their CAs with
    the places of those residues (``None`` when no CA is shown)."""
    res_idx = la.res_idx
    residues = np.unique(res_idx[rows])
    slot = np.searchsorted(residues, res_idx[rows])
    count = np.bincount(slot, minlength=residues.size).astype(np.float64)
    near = np.full(residues.size, np.inf)
    np.minimum.at(near, slot, la.near[rows])
    ca_rows = rows[la.is_ca[rows]]
    ca_k = where = None
    if ca_rows.size:
        ca_res, ca_first = np.unique(res_idx[ca_rows], return_index=True)
        ca_k = ca_rows[ca_first]
        where = np.searchsorted(residues, ca_res)
    return residues, slot, count, near, ca_k, where


def _residue_entries(
    complex_, la: LabelAtoms, u, v, alive, depth, size, style, picture=None
) -> list[list]:
    """Layout entries of the ``standard`` mode's residue labels: one per shown residue, centred
    above its CA (else above the centre of its shown atoms; screen px), in the residue's carbon
    colour, lightened. Ordered by the anchor's px distance to the drawn ligand (``picture``,
    ``leader``), else by the residue's 3D distance to it (legacy placements)."""
    entries: list[list] = []
    rows = np.flatnonzero(~la.ligand & alive & (la.res_idx >= 0))
    if not rows.size:
        return entries
    known = la.residue_groups  # every residue atom drawn (most pictures): the same groups
    groups = known[1:] if rows.size == known[0].size else _residue_groups(la, rows)
    residues, slot, count, near, ca_k, where = groups
    lu = np.bincount(slot, weights=u[rows], minlength=residues.size) / count
    lv = np.bincount(slot, weights=v[rows], minlength=residues.size) / count
    ld = np.bincount(slot, weights=depth[rows], minlength=residues.size) / count
    if ca_k is not None:
        lu[where], lv[where], ld[where] = u[ca_k], v[ca_k], depth[ca_k]
    keep = (lu >= 0) & (lu < size) & (lv >= 0) & (lv < size)
    reach = BOND_REACH
    if picture is not None:
        reach, near = picture[0], picture[1](lu, lv)
    chains = bool(la.chains and style.chain_labels)
    texts, all_residues = la.texts, complex_.residues
    for r, x, y, z, d in zip(
        residues[keep].tolist(),
        lu[keep].tolist(),
        lv[keep].tolist(),
        ld[keep].tolist(),
        near[keep].tolist(),
    ):
        text = texts.get((r, chains))
        if text is None:
            text = texts[r, chains] = residue_text(all_residues[r], chains)
        entries.append(
            [
                (1 if d <= reach else 3, 1, d, 0.0, r),
                (0, -z, text, x, y),
                x,
                y,
                0.0,
                text,
                RESIDUE_LABEL_COLOURS[r % 2],
                True,
                ("residue", r),
            ]
        )
    return entries


def _entries(complex_, la: LabelAtoms, u, v, alive, depth, radius_px, style, size) -> list[list]:
    """Layout entries ``[priority, legacy order, u, v, radius, text, colour, centred, key]``."""
    inside = alive & (u >= 0) & (u < size) & (v >= 0) & (v < size)
    ligand, res_idx = la.ligand, la.res_idx
    entries: list[list] = []
    picture = None
    if style.label_placement == "leader":
        picture = picture_reach(la, u, v, alive, radius_px, style, size)
    if style.label_mode == "standard":
        entries += _residue_entries(complex_, la, u, v, alive, depth, size, style, picture)
        ions = np.flatnonzero(~ligand & inside & (res_idx < 0)).tolist()  # metal ions
        entries += _atom_entries(
            la,
            ions,
            1,
            order_distance(la, ions, u, v, picture)[1].tolist(),
            u,
            v,
            depth,
            radius_px,
            [LIGAND_LABEL_COLOUR] * len(ions),
            picture,
        )
    elif style.label_mode == "residue_atoms":
        rows = np.flatnonzero(~ligand & inside)
        colours = [
            RESIDUE_LABEL_COLOURS[r % 2] if r >= 0 else LIGAND_LABEL_COLOUR
            for r in res_idx[rows].tolist()
        ]
        entries += _atom_entries(
            la,
            rows.tolist(),
            1,
            order_distance(la, rows, u, v, picture)[1].tolist(),
            u,
            v,
            depth,
            radius_px,
            colours,
            picture,
        )
    rows = np.flatnonzero(ligand & inside)
    entries += _atom_entries(
        la,
        rows.tolist(),
        0,
        depth[rows].astype(np.float64).tolist(),
        u,
        v,
        depth,
        radius_px,
        [LIGAND_LABEL_COLOUR] * rows.size,
    )
    return entries


def layout_labels(
    complex_, atoms, u, v, alive, depth, radius_px, style, size: int, static=None, keep=None
) -> list[PlacedLabel]:
    """The labels of a picture in drawing order (later ones on top), placed collision-aware.

    Every label of the paper's style is kept. Labels are placed one by one in the order of the
    names an H-bond answer can need: the ligand's polar atom names (near to far), then the
    residue labels (or residue polar atom names) within :data:`BOND_REACH` of the ligand (nearest
    first; ``leader``: measured in the picture, 2D, so the order follows what the picture shows
    and never 3D distances or H-bonds), then the ligand's other atom names, then the remaining
    labels. The order never depends on the answer. Each label takes the first of its
    candidate slots (:data:`SLOTS`: around its atom, then up to about two label heights off it)
    that lies inside the image and overlaps no label placed before.
    ``style.label_placement``: ``leader`` (RENDER_VERSION 5, ``layout``): the ligand's drawn
    atoms and sticks are kept clear too, and a label with no free slot goes to the free space
    nearest its atom with a leader line; ``avoid`` (RENDER_VERSION 4): a label with no free slot
    stays at its default slot, is drawn first, under the free ones, and keeps the labels placed
    after it off its place; ``avoid3`` (RENDER_VERSION 3: all ligand names first, one ring of
    slots, stuck labels not avoided); ``overlap`` (every label at its default slot, residue
    labels under ligand labels, far to near: RENDER_VERSION 2). ``static``: the selection's
    :class:`LabelAtoms` (made here when not given).
    """
    px = label_px(style, size)
    la = label_atoms(complex_, atoms) if static is None else static
    entries = _entries(complex_, la, u, v, alive, depth, radius_px, style, size)
    placement = style.label_placement
    if placement in ("avoid", "leader"):
        entries.sort(key=lambda e: e[0])
    elif placement == "avoid3":
        entries.sort(key=lambda e: e[0][1:])
    else:
        entries.sort(key=lambda e: e[1])
    space = mask = None
    # The interiors of the placed labels, one Python int of column bits per image row: a slot
    # is taken when one of its interior rows shares a bit with its interior columns.
    taken = [0] * size
    if placement == "leader" and not bool(la.ligand.all()):
        # a picture of the ligand alone keeps the ``avoid`` rule (its labels name its atoms)
        # T4's close-ups (one residue, its atoms named) keep the residue's atoms clear too
        whole = style.label_mode == "residue_atoms"
        mask = ligand_footprint(
            u,
            v,
            alive,
            radius_px,
            np.ones_like(la.ligand) if whole else la.ligand,
            la.bonds if whole else la.ligand_bonds,
            style.stick_radius / style.atom_radius,
            size,
            alone=whole,
        )
        space = FreeSpace(size, label_size("ASN 88", px)[1] + 2 * LABEL_GAP, mask)
        taken = footprint_rows(mask, size)
    caption = []
    if space is not None and style.chain_labels and len(la.chain_ids) == 1:
        if any(e[8][0] == "residue" for e in entries):
            caption = [_chain_caption(la.chain_ids[0], px, size, taken, space)]
    block = placement in ("avoid", "leader")
    dims = [label_size(e[5], px) if e[5] else (0, 0) for e in entries]
    placed = place_labels(
        entries, dims, px, size, SLOTS[placement], block, taken, space, mask, keep
    )
    return caption + placed


def _chain_caption(chain: str, px: int, size: int, taken: list[int], space) -> PlacedLabel:
    """The caption ``chain E`` of a ``leader`` picture whose residues are all of one chain
    (in pictures of more chains each residue label names its own): T8's bond and T9's answer
    name the chain, so the picture must show it. It goes to a corner clear of the ligand and is
    placed before every other label, which keep off it."""
    text = f"chain {chain}"
    w, h = label_size(text, px)
    x, y = chain_caption_spot(w, h, size, taken)
    take_clipped(
        taken,
        x - 1 - LABEL_GAP,
        y - 1 - LABEL_GAP,
        w + 2 + 2 * LABEL_GAP,
        h + 2 + 2 * LABEL_GAP,
        size,
    )
    space.take(x - LABEL_GAP, y - LABEL_GAP, w + 2 * LABEL_GAP, h + 2 * LABEL_GAP)
    return PlacedLabel(("chain", -1), text, CAPTION_COLOUR, px, x, y, w, h, True, -1)


def draw_labels(image, complex_, atoms, u, v, alive, depth, radius_px, style) -> None:
    """Paste the labels of :func:`layout_labels` onto ``image`` (RGB, final size)."""
    paste_labels(
        image, layout_labels(complex_, atoms, u, v, alive, depth, radius_px, style, image.size[0])
    )


def paste_labels(image, labels, top: int = 0) -> None:
    """Paste placed labels onto ``image``, which holds the picture's rows from ``top`` on (the
    leader lines first, under every label)."""
    draw_leaders(image, labels, top)
    if PANEL_ALPHA == 255 and image.mode == "RGB":  # opaque sprites: copied, not blended
        copy = copier(image)
        for label in labels:
            sprite, w, h = _opaque_sprite(label.text, label.px, label.colour)
            y = label.y - top
            copy(sprite, (label.x, y, label.x + w, y + h))
        return
    paste = painter(image)
    for label in labels:
        sprite, w, h = label_sprite(label.text, label.px, label.colour)
        y = label.y - top
        paste(sprite, (label.x, y, label.x + w, y + h), sprite)


def glyph_mask(text: str, px: int) -> np.ndarray:
    """(height, width) uint8 coverage of a label's glyphs (255 = fully inside a glyph), in the
    coordinates of its sprite: the pixels that show the label colour when the label is legible."""
    return np.asarray(_label_images(text, px)[1])


def lightened(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(round(c + (255 - c) * 0.35)) for c in rgb)  # type: ignore[return-value]


RESIDUE_LABEL_COLOURS = (lightened(POCKET_CARBONS[0]), lightened(POCKET_CARBONS[1]))

"""The measures of the dataset audit: an image distance with a visible margin, and label legibility.

**Image distance.** Both pictures are cut into square blocks of ``BLOCK_PX`` px (at the
reference size of 512 px, scaled with the image size: a 64 x 64 grid); the distance is the number
of blocks whose mean colour differs by at least ``VISIBLE_LEVEL`` (of 255) in some channel. Block
means ignore sub-pixel jitter and antialiasing (a shift of one pixel changes a block's mean by at
most an eighth of its contrast), while a moved, turned or rescaled atom, stick or label changes
whole blocks. ``VISIBLE_LEVEL`` = 24 is about a tenth of the brightness of a lit atom over the
black background: well above the just-noticeable contrast of a patch seen side by side.

**Margin.** A question is unique when every other candidate of its answer space differs from the
picture of the gold answer in at least ``MARGIN_BLOCKS`` = 6 blocks: 384 px of clearly changed
picture, e.g. two atoms with their sticks moved to new places, or one label's text changed,
visible when the two 512 px images are compared.

**Legibility.** A label is legible in a picture when its box is clear and its glyphs show:
no other label's box and no pixel of the ligand's drawn atoms and sticks (``raster.ligand_mask``)
meets the interior of its box (the box less its 1-px outline), and at least ``LEGIBLE_SHARE`` of
its glyph pixels (full coverage in the label's glyph mask) show exactly the label colour (drawn
inside the image, not covered by anything drawn after it). A label drawn on top of another, or
over the ligand, is not legible even when its own glyphs are intact: the reader cannot tell
which text is which, or the ligand is hidden under it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

import numpy as np
from PIL import Image

from ..core.constants import REFERENCE_IMAGE_SIZE
from ..scene.batch import PoseSheet
from ..scene.labels import PlacedLabel, glyph_mask
from ..scene.png_read import read_png

BLOCK_PX = 8
VISIBLE_LEVEL = 24.0
MARGIN_BLOCKS = 6
LEGIBLE_SHARE = 0.9


def decode(png: bytes) -> np.ndarray:
    """(H, W, 3) uint8 pixels of PNG bytes (our writer's PNGs through ``png_read.read_png``,
    3-4x faster than Pillow; any other PNG through Pillow)."""
    pixels = read_png(png)
    if pixels is not None:
        return np.ascontiguousarray(pixels)
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


class StoredPictures:
    """A question's stored pictures, each decoded when first used (a uniqueness-only audit of
    T7 reads none of them)."""

    def __init__(self, pngs: list[bytes], decode):
        self._pngs, self._decode, self._pixels = pngs, decode, {}

    def __len__(self) -> int:
        return len(self._pngs)

    def __getitem__(self, k: int) -> np.ndarray:
        if k not in self._pixels:
            self._pixels[k] = self._decode(self._pngs[k])
        return self._pixels[k]

    def __iter__(self):
        return (self[k] for k in range(len(self)))


def block_side(height: int) -> int:
    """Side of a block in px for a picture ``height`` px tall (``BLOCK_PX`` at 512 px)."""
    return max(1, int(round(BLOCK_PX * height / REFERENCE_IMAGE_SIZE)))


def block_means(pixels: np.ndarray, side: int | None = None) -> np.ndarray:
    """(H/b, W/b, 3) float32 mean colour of each ``BLOCK_PX``-px block (block side ``side``,
    default scaled with the picture's height). Sums are exact integers, divided in float64 and
    rounded to float32."""
    h, w = pixels.shape[:2]
    b = block_side(h) if side is None else int(side)
    hb, wb = h // b, w // b
    channels = pixels.shape[2] if pixels.ndim == 3 else 1
    view = np.ascontiguousarray(pixels[: hb * b, : wb * b]).reshape(hb, b, wb * b * channels)
    sums = (
        view.sum(axis=1, dtype=np.uint32).reshape(hb, wb, b, channels).sum(axis=2, dtype=np.uint32)
    )
    return (sums / float(b * b)).astype(np.float32)


def image_block_means(image: Image.Image, top: int = 0, height: int | None = None) -> np.ndarray:
    """:func:`block_means` of a picture ``height`` px tall (default: the image's) of which
    ``image`` holds the rows from ``top`` on (every other row black, as ``raster.render_rows``
    gives them), reading only the blocks around its non-black pixels (a ligand-only view is
    mostly background; the other blocks' means are 0)."""
    width = image.size[0]
    height = image.size[1] if height is None else int(height)
    b = block_side(height)
    hb, wb = height // b, width // b
    out = np.zeros((hb, wb, 3), dtype=np.float32)
    box = image.getbbox()
    if box is None:
        return out
    bx0, by0 = box[0] // b, (box[1] + top) // b
    bx1, by1 = min(wb, -(-box[2] // b)), min(hb, -(-(box[3] + top) // b))
    if bx1 <= bx0 or by1 <= by0:
        return out
    rows = np.zeros(((by1 - by0) * b, (bx1 - bx0) * b, 3), dtype=np.uint8)
    r0, r1 = max(by0 * b - top, 0), min(by1 * b - top, image.size[1])
    if r1 > r0:
        part = np.asarray(image.crop((bx0 * b, r0, bx1 * b, r1)).convert("RGB"))
        rows[r0 + top - by0 * b : r1 + top - by0 * b] = part
    out[by0:by1, bx0:bx1] = block_means(rows, b)
    return out


def image_distance(a: np.ndarray, b: np.ndarray) -> int:
    """Visibly different blocks between two pictures given as :func:`block_means` arrays."""
    if a.shape != b.shape:
        return int(a.shape[0] * a.shape[1])
    diff = np.abs(a - b)
    # (max over channels >= level) == (some channel >= level); channel planes avoid numpy's slow
    # reduction over a 3-long axis
    visible = diff[..., 0] >= VISIBLE_LEVEL
    for k in range(1, diff.shape[2]):
        visible |= diff[..., k] >= VISIBLE_LEVEL
    return int(np.count_nonzero(visible))


def image_distances(gold: np.ndarray, means: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`image_distance` from ``gold`` to each of the (K, ...) stacked ``means``, whose
    candidate ``k`` is 0 outside the block rows ``rows[k, 0] .. rows[k, 1]`` (there a block
    differs visibly where the gold picture's mean reaches the level in some channel)."""
    dark = np.count_nonzero(_visible(gold), axis=1)
    before = np.concatenate([[0], np.cumsum(dark)])
    out = np.empty(len(means), dtype=np.int64)
    for k, (r0, r1) in enumerate(rows.tolist()):
        inside = np.count_nonzero(_visible(means[k, r0:r1] - gold[r0:r1]))
        out[k] = inside + before[r0] + before[-1] - before[r1]
    return out


def _visible(diff: np.ndarray) -> np.ndarray:
    """Blocks where a difference of block means reaches ``VISIBLE_LEVEL`` in some channel."""
    diff = np.abs(diff)
    visible = diff[..., 0] >= VISIBLE_LEVEL
    for k in range(1, diff.shape[-1]):
        visible |= diff[..., k] >= VISIBLE_LEVEL
    return visible


def sheet_block_means(
    sheets: Iterable[PoseSheet], count: int, height: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(means, rows)``: the (count, H/b, W/b, 3) :func:`block_means` of the ``height`` px
    square pictures drawn as the bands of ``scene.batch.render_stack``'s sheets (rendered with
    ``align`` = :func:`block_side`: each band and each sheet's first column are on the block
    grid), and the block rows of each band (0 outside them)."""
    b = block_side(height)
    hb = wb = height // b
    out = np.zeros((count, hb, wb, 3), dtype=np.float32)
    rows = np.zeros((count, 2), dtype=np.int64)
    for sheet in sheets:
        means = block_means(np.asarray(sheet.image), b)
        c0 = sheet.left // b
        cols = min(means.shape[1], wb - c0)
        for k, row, top, n in sheet.bands:
            r0 = top // b
            n = min(n // b, hb - r0)
            out[k, r0 : r0 + n, c0 : c0 + cols] = means[row // b : row // b + n, :cols]
            rows[k] = r0, r0 + n
    return out, rows


def clear_boxes(labels: list[PlacedLabel], ligand: np.ndarray | None = None) -> list[bool]:
    """Per label, whether no other label's box and no ``ligand`` pixel (a bool mask of the
    picture, or ``None``) meets the interior of its box."""
    boxes = np.array(
        [(lb.x + 1, lb.y + 1, lb.x + lb.width - 1, lb.y + lb.height - 1) for lb in labels],
        dtype=np.int64,
    ).reshape(-1, 4)
    if not len(boxes):
        return []
    meets = (
        (boxes[:, None, 0] < boxes[None, :, 2])
        & (boxes[None, :, 0] < boxes[:, None, 2])
        & (boxes[:, None, 1] < boxes[None, :, 3])
        & (boxes[None, :, 1] < boxes[:, None, 3])
    )
    np.fill_diagonal(meets, False)
    empty = (boxes[:, 2] <= boxes[:, 0]) | (boxes[:, 3] <= boxes[:, 1])
    meets[empty, :] = False
    meets[:, empty] = False
    out = (~meets.any(axis=1)).tolist()
    if ligand is not None:
        height, width = ligand.shape
        for k, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
            x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
            if out[k] and x1 > x0 and y1 > y0 and ligand[y0:y1, x0:x1].any():
                out[k] = False
    return out


def legible_keys(
    pixels: np.ndarray, labels: Iterable[PlacedLabel], ligand: np.ndarray | None = None
) -> set[tuple[str, int]]:
    """Keys of the labels legible in ``pixels`` (the picture the labels were drawn on);
    ``ligand``: the picture's ligand mask (``raster.ligand_mask``)."""
    height, width = pixels.shape[:2]
    out: set[tuple[str, int]] = set()
    labels = list(labels)
    for label, clear in zip(labels, clear_boxes(labels, ligand)):
        if not clear:
            continue
        mask = glyph_mask(label.text, label.px) == 255
        total = int(mask.sum())
        if total == 0:
            continue
        x0, y0 = max(label.x, 0), max(label.y, 0)
        x1, y1 = min(label.x + label.width, width), min(label.y + label.height, height)
        if x1 <= x0 or y1 <= y0:
            continue
        window = pixels[y0:y1, x0:x1]
        inside = mask[y0 - label.y : y1 - label.y, x0 - label.x : x1 - label.x]
        shows = (window == np.asarray(label.colour, dtype=np.uint8)).all(axis=2) & inside
        if shows.sum() >= LEGIBLE_SHARE * total:
            out.add(label.key)
    return out


def margin_summary(margins: list[int]) -> dict:
    """Runner-up margin distribution (blocks): min, 5th percentile, median, max."""
    if not margins:
        return {}
    values = np.asarray(margins, dtype=np.float64)
    return {
        "min": int(values.min()),
        "p5": float(np.percentile(values, 5)),
        "median": float(np.median(values)),
        "max": int(values.max()),
    }

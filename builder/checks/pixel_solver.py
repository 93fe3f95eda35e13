"""A pixel-only solver: answers T1 and T3 by image registration, from the images and the prompt
text alone (no coordinates, no metadata), as a baseline beside the scorer's random and constant
ones.

Public constants used: the 30 degree field of view of the dataset card (focal length
``f = (W / 2) / tan(15 deg)`` px for a ``W`` px image) and the camera distance ``d`` that the T1
and T3 prompts state; for T3 also the renderer's public style constants (base colours, stick
band shades, fog ramp, label colours; imported from ``builder.scene``, never coordinates). The
ligand is found by colour: its carbons are the only grey atoms (pocket carbons are purple or
orange); label text (near white) is left out.

* **T1** ``move x|y D``: the 2D shift of the ligand between image 1 (front) and image 4 (front
  after the move), by phase correlation of the ligand masks; the larger component gives the axis
  and ``D = shift * (d - z) / f``, where ``z`` is the ligand's depth offset read from image 3
  (the top view shows the front view's z axis vertically).
* **T3** ``move z D``: the ligand alone is too small and too covered by its labels in image 1
  to give the scale to the needed 1 %, so the whole scene is used, with each pixel's depth read
  from the depth cueing: a stick band's colour is ``rint(base * shade * fog)`` with public base
  colours, band shades and fog ramp (24 levels over the camera's fitted bounding sphere,
  ``d -+ d sin(15 deg) / FIT_MARGIN``), so a table of all stick colours decodes the base, the band
  and the fog level (depth) of most stick pixels of image 1 (label colours left out). Each decoded
  pixel at depth ``t`` is sent to ``c + (p - c) t / (t - D)`` for each candidate ``D`` (0.1 Å
  steps) and scores when image 4 shows the same base and band there; the score curve is smoothed
  over +-0.5 Å and its peak, rounded, is the answer. Depths are read one level nearer than the
  level's centre at 512 px (:data:`LEVEL_OFFSET`, less at higher resolutions): merged sticks
  carry their farther atom's level.
  (The ligand's scale change alone scored 0.27: labels cover most of it in image 1.)

T2 is not attempted: an out-of-plane roll cannot be undone in 2D without reconstructing depth.

**Questions that state no camera** (the ``paper`` profile, whose prompts give neither the camera
distance nor the field of view, as the paper's do not): nothing above that needs them is used.

* **T1**: the same ligand shift, turned into Å with a ruler a person has too: bond lengths.
  Every stick pixel of image 1 (labels left out) is thinned to a one-pixel skeleton; the chains
  between its junctions and ends are the projected bonds, cut short where labels cover them.
  Their 90th percentile length (+2 px for the junctions) counts as :data:`RULER_SEGMENT_A` Å
  (fitted on the embedded samples: the median ratio to the true scale; bonds are 1.3-1.5 Å, and
  the longest projected ones lose about a third to junctions and labels). ``D = shift / scale``.
* **T3**: not answered. The scale ratio k between images 1 and 4 can be measured, but
  ``D = t (1 - 1/k)`` needs the distance t from the camera to the scene in Å, which such a
  prompt does not give and the pictures give only through perspective within the scene (about
  +-10 % over its depth, far too weak for 1 Å bins); a bond ruler gives Å per pixel, not t.
"""

from __future__ import annotations

import itertools
import math
import re
from functools import lru_cache

import numpy as np

from .. import scoring
from ..core.registry import TASK_BY_NAME, TASK_SPECS, TaskSpec
from ..operations.language import Move
from ..scene.camera import FIT_MARGIN
from ..scene.labels import RESIDUE_LABEL_COLOURS
from ..scene.requests import ELEMENT_COLOURS, LIGAND_CARBON, POCKET_CARBONS, UNKNOWN_COLOUR, Style
from ..scene.shading import FOG_LEVELS, band_table
from ..scoring.kinds import kind_of
from ..store.cluster import pool_map
from ..store.parquet import iter_config_rows
from .audit_checks import decode

KIND = scoring.IMAGE_BASELINES[0]
#: Step (Å) of the T3 depth search, and the half-width (steps) of the score curve's smoothing.
DEPTH_STEP = 0.1
SMOOTH_STEPS = 5
#: Fog levels added to a decoded level before it is read as a depth, up to 512 px, and per px of
#: image size above: a stick merged over a bond is drawn in its farther atom's level
#: (scene.raster), so its pixels lie nearer than the level says, by an amount that shrinks with
#: the resolution. Fitted on sample builds: -1 at 512 px (answers within +-0.4 Å), 0 at 768 px;
#: T3 exact on 100% / 100% / 78% of the sample questions at 512 / 768 / 384 px.
LEVEL_OFFSET = -1.0
LEVEL_OFFSET_PER_PX = 1.0 / 256.0
#: The card scores the solver on at most this many questions per task (test split first).
MAX_QUESTIONS = 300


def _mode(spec: TaskSpec) -> str | None:
    """``shift`` for a single ``move`` along x or y (T1), ``depth`` for one along z (T3), None
    for every other answer (the task's answer kind says, from its registry entry)."""
    return kind_of(spec).pixel_solver_mode(spec)


#: The tasks the solver answers (T1 and T3).
TASKS = tuple(spec.name for spec in TASK_SPECS if _mode(spec) is not None)
FOV_DEG = 30.0
#: The length (Å) that the 90th percentile skeleton chain (+2 px) of a stick picture stands for:
#: fitted on the 19 embedded samples (median ratio to the true scale 1.00; spread +-7 %).
RULER_SEGMENT_A = 1.0
RULER_PERCENTILE = 90.0
_DISTANCE_RE = re.compile(r"camera\s+stands\s+([0-9]+(?:\.[0-9]+)?)\s+Å")
_RANGE_RE = re.compile(
    r"`move\s+z\s+D`,\s+with\s+D\s+a\s+whole\s+number\s+of\s+Å\s+from\s+(-?\d+)\s+to\s+(-?\d+)"
)


def _box(mask: np.ndarray, k: int) -> np.ndarray:
    """Mean of ``mask`` over the (2k+1)-px square around each pixel (zero outside the image)."""
    out = mask.astype(np.float64)
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (k + 1, k)
        c = np.cumsum(np.pad(out, pad), axis=axis)
        out = (
            np.take(c, np.arange(2 * k + 1, c.shape[axis]), axis=axis)
            - np.take(c, np.arange(0, c.shape[axis] - 2 * k - 1), axis=axis)
        ) / (2 * k + 1)
    return out


def _value_and_grey(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel of an RGB picture: its value (the largest channel, int16) and whether it is
    grey (channels within 10 levels of each other). Computed over channel planes instead of
    reductions over the 3-long colour axis (slow in numpy): the same values."""
    px = pixels.astype(np.int16)
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    value = np.maximum(np.maximum(r, g), b)
    return value, (value - np.minimum(np.minimum(r, g), b)) <= 10


def ligand_mask(pixels: np.ndarray) -> np.ndarray:
    """Float mask of the grey (ligand carbon) pixels: channel spread <= 10, value >= 40, and
    not within 1 px of label text. Label glyphs are grey too but keep their pixel size while the
    atoms scale; they are found as near-white pixels (>= 200) and as bright pixels (>= 100)
    touching the labels' pure black outline (a lit sphere's edge fades into the background)."""
    value, grey = _value_and_grey(pixels)
    black = value == 0
    touches = np.zeros_like(black)
    touches[1:] |= black[:-1]
    touches[:-1] |= black[1:]
    touches[:, 1:] |= black[:, :-1]
    touches[:, :-1] |= black[:, 1:]
    text = grey & ((value >= 200) | ((value >= 100) & touches))
    return (grey & (value >= 40) & ~(_box(text, 1) > 0)).astype(np.float64)


def _centroid(mask: np.ndarray) -> tuple[float, float] | None:
    total = mask.sum()
    if total < 20:
        return None
    ys, xs = np.indices(mask.shape)
    return float((xs * mask).sum() / total), float((ys * mask).sum() / total)


def phase_shift(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(dx, dy) in pixels that moves ``a`` onto ``b`` (phase correlation, sub-pixel peak)."""
    fa, fb = np.fft.fft2(a), np.fft.fft2(b)
    cross = fb * np.conj(fa)
    cross /= np.abs(cross) + 1e-9
    corr = np.fft.ifft2(cross).real
    iy, ix = np.unravel_index(int(np.argmax(corr)), corr.shape)
    h, w = corr.shape

    def refine(c_minus: float, c0: float, c_plus: float) -> float:
        denom = c_minus - 2 * c0 + c_plus
        return 0.0 if abs(denom) < 1e-12 else 0.5 * (c_minus - c_plus) / denom

    dy = iy + refine(corr[(iy - 1) % h, ix], corr[iy, ix], corr[(iy + 1) % h, ix])
    dx = ix + refine(corr[iy, (ix - 1) % w], corr[iy, ix], corr[iy, (ix + 1) % w])
    return (dx - w if dx > w / 2 else dx), (dy - h if dy > h / 2 else dy)


def _blur(mask: np.ndarray, k: int = 2) -> np.ndarray:
    return _box(mask, k)


def _ligand_depth(top: np.ndarray, distance: float, focal: float) -> float:
    """The ligand's z (Å, toward the viewer) from the top view, where the front z axis runs down
    the image (top = front after ``roll x 90``); the left view would serve too, but labels sit
    right of their atoms and bias a horizontal position."""
    c = _centroid(ligand_mask(top))
    if c is None:
        return 0.0
    return (c[1] - top.shape[0] / 2.0) * distance / focal


def label_cover(pixels: np.ndarray) -> np.ndarray:
    """Boolean mask of the pixels label sprites may cover: glyphs found by colour (the ligand
    label's near white, or a residue label colour at >= 55 % brightness: antialiased edges blend
    it with the black outline), grown by 2 px (the outline and the antialiased edge)."""
    value, grey = _value_and_grey(pixels)
    text = grey & (value >= 200)
    flat = pixels.astype(np.float64)
    for colour in RESIDUE_LABEL_COLOURS:
        c = np.asarray(colour, dtype=np.float64)
        alpha = flat @ c / float(c @ c)
        near = alpha >= 0.55
        for k in range(3):
            near &= np.abs(flat[..., k] - alpha * c[k]) <= 12.0
        text |= near
    return _box(text, 2) > 0


@lru_cache(maxsize=1)
def _stick_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted packed RGB, identity = base * 8 + band, fog level) of every stick band colour the
    renderer can draw with the default style; colours shared by two readings are left out."""
    style = Style()
    inks = band_table(int(style.stick_bands), float(style.fog))[1]  # (fog level, band)
    bases = [LIGAND_CARBON, *POCKET_CARBONS, UNKNOWN_COLOUR] + [
        c for k, c in ELEMENT_COLOURS.items() if k not in ("C", "H")
    ]
    seen: dict[int, tuple[int, int] | None] = {}
    for i, base in enumerate(bases):
        rgb = np.clip(
            np.rint(np.asarray(base, dtype=np.float64)[None, None, :] * inks[..., None]), 0, 255
        ).astype(np.int64)
        for level in range(inks.shape[0]):
            for band in range(inks.shape[1]):
                key = int(
                    (rgb[level, band, 0] << 16) | (rgb[level, band, 1] << 8) | rgb[level, band, 2]
                )
                reading = (i * 8 + band, level)
                seen[key] = reading if seen.get(key, reading) == reading else None
    keys = np.array(sorted(k for k, v in seen.items() if v is not None and k), dtype=np.int64)
    return (
        keys,
        np.array([seen[k][0] for k in keys.tolist()]),
        np.array([seen[k][1] for k in keys.tolist()]),
    )


def stick_pixels(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(identity, fog level) per pixel from :func:`_stick_table`, -1 where the colour is no stick
    colour or a label may cover the pixel."""
    keys, idents, levels = _stick_table()
    px = pixels.astype(np.int64)
    packed = (px[..., 0] << 16) | (px[..., 1] << 8) | px[..., 2]
    at = np.clip(np.searchsorted(keys, packed), 0, keys.size - 1)
    ok = (keys[at] == packed) & ~label_cover(pixels)
    return np.where(ok, idents[at], -1), np.where(ok, levels[at], -1)


def _solve_zoom(question: str, distance: float, front: np.ndarray, after: np.ndarray) -> str:
    """T3 by depth-aware registration of the whole scene (module docstring)."""
    lo, hi = (40, 60)
    r = _RANGE_RE.search(question)
    if r:
        lo, hi = int(r.group(1)), int(r.group(2))
    h, w = front.shape[:2]
    ident1, level1 = stick_pixels(front)
    ident4, _ = stick_pixels(after)
    ys, xs = np.nonzero(ident1 >= 0)
    if ys.size < 20:
        return ""
    sphere_r = distance * math.sin(math.radians(FOV_DEG) / 2.0) / FIT_MARGIN
    depth = (
        distance
        - sphere_r
        + (level1[ys, xs] + LEVEL_OFFSET + LEVEL_OFFSET_PER_PX * max(w - 512, 0))
        * 2.0
        * sphere_r
        / (FOG_LEVELS - 1)
    )
    ident, du, dv = ident1[ys, xs], xs + 0.5 - w / 2.0, ys + 0.5 - h / 2.0
    candidates = np.arange(lo - 0.5, hi + 0.5 + 1e-6, DEPTH_STEP)
    score = np.zeros(candidates.size)
    for k, move in enumerate(candidates):
        ahead = depth - move
        ratio = depth / np.maximum(ahead, 1e-3)
        u4, v4 = (
            np.floor(du * ratio + w / 2.0).astype(np.int64),
            np.floor(dv * ratio + h / 2.0).astype(np.int64),
        )
        ok = (ahead > 1.0) & (u4 >= 0) & (u4 < w) & (v4 >= 0) & (v4 < h)
        there = ident4[v4[ok], u4[ok]]
        shown = there >= 0
        score[k] = float((there[shown] == ident[ok][shown]).sum()) / max(int(shown.sum()), 1)
    kernel = np.ones(2 * SMOOTH_STEPS + 1) / (2 * SMOOTH_STEPS + 1)
    best = float(candidates[int(np.argmax(np.convolve(score, kernel, mode="same")))])
    return str(Move("z", min(max(int(round(best)), lo), hi)))


def _thin(mask: np.ndarray) -> np.ndarray:
    """One-pixel skeleton of a boolean mask (Zhang-Suen thinning): each sub-step drops, at once,
    the set pixels whose ring of eight neighbours passes that sub-step's test
    (:func:`_thinning_tables`), until nothing changes."""
    img = np.pad(mask.astype(np.uint8), 1)
    tables = _thinning_tables()
    changed = True
    while changed:
        changed = False
        for step in (0, 1):
            p = img
            # the ring p2 (north) .. p9 (north-west), clockwise, as the bits 0 .. 7 of a code
            ring = (
                p[:-2, 1:-1],
                p[:-2, 2:],
                p[1:-1, 2:],
                p[2:, 2:],
                p[2:, 1:-1],
                p[2:, :-2],
                p[1:-1, :-2],
                p[:-2, :-2],
            )
            code = ring[0].copy()
            for bit, x in enumerate(ring[1:], start=1):
                code |= x << bit
            drop = (p[1:-1, 1:-1] == 1) & tables[step][code]
            if drop.any():
                img[1:-1, 1:-1][drop] = 0
                changed = True
    return img[1:-1, 1:-1].astype(bool)


@lru_cache(maxsize=1)
def _thinning_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per Zhang-Suen sub-step, whether a set pixel with a given ring of neighbours (the code
    of :func:`_thin`) is dropped: 2 to 6 set neighbours, exactly one 0 -> 1 step around the
    ring, and (sub-step 0) p2 p4 p6 and p4 p6 p8 not all set, (sub-step 1) p2 p4 p8 and p2 p6
    p8 not all set."""
    tables = []
    for step in (0, 1):
        table = np.zeros(256, dtype=bool)
        for code in range(256):
            p2, p3, p4, p5, p6, p7, p8, p9 = ((code >> k) & 1 for k in range(8))
            ring = [p2, p3, p4, p5, p6, p7, p8, p9, p2]
            rises = sum(ring[k] == 0 and ring[k + 1] == 1 for k in range(8))
            a, b = (p2 & p4 & p6, p4 & p6 & p8) if step == 0 else (p2 & p4 & p8, p2 & p6 & p8)
            table[code] = 2 <= sum(ring[:8]) <= 6 and rises == 1 and a == 0 and b == 0
        table.setflags(write=False)
        tables.append(table)
    return tables[0], tables[1]


def _chain_lengths(skeleton: np.ndarray) -> np.ndarray:
    """Pixel counts (+2 for the junctions at their ends) of the skeleton's chains: the runs of
    pixels with exactly two neighbours (8-connected components of them), in the order of each
    chain's first pixel (row by row)."""
    h, w = skeleton.shape
    pad = np.pad(skeleton.astype(np.int16), 1)
    count = sum(
        pad[1 + dy : h + 1 + dy, 1 + dx : w + 1 + dx]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if dy or dx
    )
    ys, xs = np.nonzero(skeleton & (count == 2))
    # chain pixels numbered row by row; the pairs of 8-neighbours among them
    number = np.full((h + 2, w + 2), -1, dtype=np.int64)
    number[ys + 1, xs + 1] = np.arange(ys.size)
    firsts, seconds = [], []
    for dy, dx in ((0, 1), (1, -1), (1, 0), (1, 1)):
        other = number[ys + 1 + dy, xs + 1 + dx]
        firsts.append(np.flatnonzero(other >= 0))
        seconds.append(other[other >= 0])
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    # each pixel's label: the least number of its chain (min-label propagation over the pairs,
    # with pointer jumping: labels are pixel numbers of the same chain)
    label = np.arange(ys.size)
    while True:
        low = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        while True:
            jumped = new[new]
            if (jumped == new).all():
                break
            new = jumped
        if (new == label).all():
            break
        label = new
    return np.unique(label, return_counts=True)[1] + 2


def bond_ruler(pixels: np.ndarray) -> float | None:
    """Pixels per Å of a stick picture, from its bonds (module docstring); None when the
    picture holds too few bonds to read."""
    sticks = ((pixels[..., 0] | pixels[..., 1] | pixels[..., 2]) > 0) & ~label_cover(pixels)
    lengths = _chain_lengths(_thin(sticks))
    if lengths.size < 20:
        return None
    return float(np.percentile(lengths, RULER_PERCENTILE)) / RULER_SEGMENT_A


def _ligand_shift(front: np.ndarray, after: np.ndarray) -> tuple[str, float]:
    """Axis and signed shift (px, +x right, +y up) of the ligand from image 1 to image 4."""
    dx, dy = phase_shift(_blur(ligand_mask(front)), _blur(ligand_mask(after)))
    return ("x", dx) if abs(dx) >= abs(dy) else ("y", -dy)


def solve(task: str, question: str, images: list[bytes]) -> str:
    """The solver's answer to one question ('' when it cannot answer)."""
    if task not in TASKS or len(images) < 4:
        return ""
    m = _DISTANCE_RE.search(question)
    if m is None:  # no camera stated: T1 with a bond ruler, T3 not answerable (module docstring)
        if _mode(TASK_BY_NAME[task]) != "shift":
            return ""
        front = decode(images[0])
        scale = bond_ruler(front)
        if not scale:
            return ""
        axis, shift = _ligand_shift(front, decode(images[3]))
        value = int(round(shift / scale))
        return str(Move(axis, value)) if value else ""
    distance = float(m.group(1))
    front, top, after = decode(images[0]), decode(images[2]), decode(images[3])
    if _mode(TASK_BY_NAME[task]) == "depth":
        return _solve_zoom(question, distance, front, after)
    focal = (front.shape[1] / 2.0) / math.tan(math.radians(FOV_DEG) / 2.0)
    z = _ligand_depth(top, distance, focal)
    m1, m4 = ligand_mask(front), ligand_mask(after)
    dx, dy = phase_shift(_blur(m1), _blur(m4))
    axis, shift = ("x", dx) if abs(dx) >= abs(dy) else ("y", -dy)
    value = int(round(shift * (distance - z) / focal))
    return str(Move(axis, value)) if value else ""


def predict(row: dict) -> str:
    """The solver's answer to a stored row (``task``, ``question``, ``images``)."""
    return solve(row["task"], row["question"], [img["bytes"] for img in row["images"]])


#: Questions per job when the card's baseline is spread over a process pool.
POOL_CHUNK = 8


def _solve_many(items: list[tuple[str, str, list[bytes]]]) -> list[str]:
    return [solve(task, question, images) for task, question, images in items]


def scores(
    out, task: str, splits=("test", "train"), limit: int = MAX_QUESTIONS, pool=None
) -> list[float]:
    """Scores (0-1, through the scorer) of the solver on the questions of ``task`` in ``splits``
    (in that order, at most ``limit``); ``pool`` (a process pool) solves them in chunks of
    :data:`POOL_CHUNK`, with the same scores in the same order."""
    columns = ["task", "question", "images", "answer", "metadata"]
    every = (row for split in splits for row in iter_config_rows(out, task, split, columns))
    rows = list(itertools.islice(every, limit))
    items = [(r["task"], r["question"], [img["bytes"] for img in r["images"]]) for r in rows]
    chunks = [items[k : k + POOL_CHUNK] for k in range(0, len(items), POOL_CHUNK)]
    predictions = [
        p
        for chunk in pool_map(pool, _solve_many, chunks, f"card: pixel-only {task}")
        for p in chunk
    ]
    return [
        scoring.score_prediction(task, pred, row["answer"], row["metadata"])["score"]
        for pred, row in zip(predictions, rows)
    ]


def baseline_row(out, tasks, pool=None, columns=None) -> str:
    """The card's baselines-table row of this solver (score %, '–' for tasks it does not answer);
    ``columns``: the table's column names (default ``tasks``), one cell each ('–' for a column
    that is not a task, such as a half or an average); ``pool``: see :func:`scores`."""
    cells = []
    for column in tasks if columns is None else columns:
        values = scores(out, column, pool=pool) if column in TASKS and column in tasks else []
        cells.append(f"{100 * np.mean(values):.1f}" if values else "–")
    return (
        "| pixel-only registration (images + prompt; T1, T3 where the prompt states the camera) | "
        + " | ".join(cells)
        + " |"
    )

"""A pixel-only solver: answers T1 and T3 by image registration, from the images and the prompt
text alone (no coordinates, no metadata), as a baseline beside the scorer's random and constant
ones.

Public constants used: the 30 degree field of view of the dataset card (focal length
``f = (W / 2) / tan(15 deg)`` px for a ``W`` px image) and the camera distance ``d`` that the T1
and T3 prompts state. The ligand is found by colour: its carbons are the only grey atoms (pocket
carbons are purple or orange); label text (near white) is left out.

* **T1** ``move x|y D``: the 2D shift of the ligand between image 1 (front) and image 4 (front
  after the move), by phase correlation of the ligand masks; the larger component gives the axis
  and ``D = shift * (d - z) / f``, where ``z`` is the ligand's depth offset read from image 3
  (the top view shows the front view's z axis vertically).
* **T3** ``move z D``: the ligand is seen at scale ``s = (d - z) / (d - D - z)`` in image 4
  relative to image 1 (scaling about the image centre); scales over the range are tried by scaling
  the image 1 ligand mask (label text left out) by ``s`` and comparing it with the image 4
  mask; the best scale gives ``D = (d - z) (1 - 1 / s)``, rounded.

T2 is not attempted: an out-of-plane roll cannot be undone in 2D without reconstructing depth.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .. import scoring
from ..operations.language import Move
from .audit_checks import decode
from .parquet import iter_config_rows

KIND = scoring.IMAGE_BASELINES[0]
#: Step of the T3 scale search.
SCALE_STEP = 0.005
#: The card scores the solver on at most this many questions per task (test split first).
MAX_QUESTIONS = 300
TASKS = ("translation", "zooming")
FOV_DEG = 30.0
_DISTANCE_RE = re.compile(r"camera\s+stands\s+([0-9]+(?:\.[0-9]+)?)\s+Å")
_RANGE_RE = re.compile(r"`move\s+z\s+D`,\s+with\s+D\s+a\s+whole\s+number\s+of\s+Å\s+from\s+(-?\d+)\s+to\s+(-?\d+)")


def _box(mask: np.ndarray, k: int) -> np.ndarray:
    """Mean of ``mask`` over the (2k+1)-px square around each pixel (zero outside the image)."""
    out = mask.astype(np.float64)
    for axis in (0, 1):
        pad = [(0, 0), (0, 0)]
        pad[axis] = (k + 1, k)
        c = np.cumsum(np.pad(out, pad), axis=axis)
        out = (np.take(c, np.arange(2 * k + 1, c.shape[axis]), axis=axis)
               - np.take(c, np.arange(0, c.shape[axis] - 2 * k - 1), axis=axis)) / (2 * k + 1)
    return out


def ligand_mask(pixels: np.ndarray) -> np.ndarray:
    """Float mask of the grey (ligand carbon) pixels: channel spread <= 10, value >= 40, and
    not within 1 px of label text. Label glyphs are grey too but keep their pixel size while the
    atoms scale; they are found as near-white pixels (>= 200) and as bright pixels (>= 100)
    touching the labels' pure black outline (a lit sphere's edge fades into the background)."""
    px = pixels.astype(np.int16)
    value = px.max(axis=2)
    grey = (value - px.min(axis=2)) <= 10
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




def _scaled(mask: np.ndarray, s: float, window: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """``mask`` scaled by ``s`` about the image centre (nearest-neighbour sampling), cut to
    ``window`` = (y0, y1, x0, x1) of the output (default: the whole image)."""
    h, w = mask.shape
    y0, y1, x0, x1 = window or (0, h, 0, w)
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float64)
    sx = np.rint((xs + 0.5 - w / 2.0) / s + w / 2.0 - 0.5).astype(np.int64)
    sy = np.rint((ys + 0.5 - h / 2.0) / s + h / 2.0 - 0.5).astype(np.int64)
    ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
    out = np.zeros(ys.shape)
    out[ok] = mask[sy[ok], sx[ok]]
    return out


def _ligand_depth(top: np.ndarray, distance: float, focal: float) -> float:
    """The ligand's z (Å, toward the viewer) from the top view, where the front z axis runs down
    the image (top = front after ``roll x 90``); the left view would serve too, but labels sit
    right of their atoms and bias a horizontal position."""
    c = _centroid(ligand_mask(top))
    if c is None:
        return 0.0
    return (c[1] - top.shape[0] / 2.0) * distance / focal


def solve(task: str, question: str, images: list[bytes]) -> str:
    """The solver's answer to one question ('' when it cannot answer)."""
    m = _DISTANCE_RE.search(question)
    if task not in TASKS or m is None or len(images) < 4:
        return ""
    distance = float(m.group(1))
    front, top, after = decode(images[0]), decode(images[2]), decode(images[3])
    focal = (front.shape[1] / 2.0) / math.tan(math.radians(FOV_DEG) / 2.0)
    z = _ligand_depth(top, distance, focal)
    m1, m4 = ligand_mask(front), ligand_mask(after)
    if task == "translation":
        dx, dy = phase_shift(_blur(m1), _blur(m4))
        axis, shift = ("x", dx) if abs(dx) >= abs(dy) else ("y", -dy)
        value = int(round(shift * (distance - z) / focal))
        return str(Move(axis, value)) if value else ""
    lo, hi = (40, 60)
    r = _RANGE_RE.search(question)
    if r:
        lo, hi = int(r.group(1)), int(r.group(2))
    if distance - hi - z <= 1.0:
        hi = int(math.floor(distance - z - 1.0))
    if hi < lo:
        return ""
    ys, xs = np.nonzero(m4)
    if ys.size == 0:
        return ""
    h, w = m4.shape
    pad = 24  # the window holds the image 4 ligand and a margin for scales that overshoot it
    window = (max(int(ys.min()) - pad, 0), min(int(ys.max()) + pad + 1, h),
              max(int(xs.min()) - pad, 0), min(int(xs.max()) + pad + 1, w))
    target = _blur(m4[window[0]:window[1], window[2]:window[3]], 2)

    def error(scale: float) -> float:
        return float(np.abs(_blur(_scaled(m1, scale, window), 2) - target).sum())

    s_lo, s_hi = (distance - z) / (distance - lo + 0.5 - z), (distance - z) / (distance - hi - 0.5 - z)
    coarse = min(np.arange(s_lo, s_hi, 8 * SCALE_STEP), key=error)
    best_s = min(np.arange(coarse - 8 * SCALE_STEP, coarse + 8 * SCALE_STEP, SCALE_STEP), key=error)
    depth = int(round((distance - z) * (1.0 - 1.0 / float(best_s))))
    return str(Move("z", min(max(depth, lo), hi)))


def predict(row: dict) -> str:
    """The solver's answer to a stored row (``task``, ``question``, ``images``)."""
    return solve(row["task"], row["question"], [img["bytes"] for img in row["images"]])


def scores(out, task: str, splits=("test", "train"), limit: int = MAX_QUESTIONS) -> list[float]:
    """Scores (0-1, through the scorer) of the solver on the questions of ``task`` in ``splits``
    (in that order, at most ``limit``)."""
    values: list[float] = []
    for split in splits:
        for row in iter_config_rows(out, task, split, ["task", "question", "images", "answer", "metadata"]):
            if len(values) >= limit:
                return values
            values.append(scoring.score_prediction(task, predict(row), row["answer"], row["metadata"])["score"])
    return values


def baseline_row(out, tasks) -> str:
    """The card's baselines-table row of this solver (score %, '–' for tasks it does not answer)."""
    cells = []
    for task in tasks:
        values = scores(out, task) if task in TASKS else []
        cells.append(f"{100 * np.mean(values):.1f}" if values else "–")
    return "| pixel-only registration (images + prompt; T1, T3) | " + " | ".join(cells) + " |"

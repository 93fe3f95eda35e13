"""Geometry the validator's checks use to re-derive answers without the generators' operation
code: their own Rodrigues rotations, rigid motions of coordinates, and the recovery of an
operation from before/after coordinates (centroid shift, Kabsch rotation)."""

from __future__ import annotations

import math
import re

import numpy as np

AXIS = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}
_OP = re.compile(r"^(move|roll) ([xyz]) (-?\d+)$")


def rodrigues(axis: str, angle_deg: float) -> np.ndarray:
    k = AXIS[axis]
    a = math.radians(angle_deg)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx


def parse_ops(ops: list[str] | str) -> list[tuple[str, str, int]]:
    """``(verb, axis, value)`` of each command of a list or a ``, ``-joined text."""
    items = ops.split(", ") if isinstance(ops, str) else ops
    out = []
    for text in items:
        m = _OP.match(text.strip())
        if not m:
            raise ValueError(f"bad operation {text!r}")
        out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def apply_ops(coords: np.ndarray, ops, pivot: np.ndarray) -> np.ndarray:
    """Rigid motion by ``ops``; the pivot (model centre) travels with the model."""
    xyz, centre = coords.copy(), pivot.copy()
    for verb, axis, value in ops:
        if verb == "move":
            xyz = xyz + AXIS[axis] * value
            centre = centre + AXIS[axis] * value
        else:
            rot = rodrigues(axis, value)
            xyz = (xyz - centre) @ rot.T + centre
    return xyz


def _kabsch(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    a, b = before - before.mean(0), after - after.mean(0)
    u, _, vt = np.linalg.svd(a.T @ b)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    return vt.T @ np.diag([1, 1, d]) @ u.T


def recover_roll(before: np.ndarray, after: np.ndarray) -> tuple[str, int] | None:
    """Axis and whole-degree angle of the rotation taking ``before`` to ``after``."""
    rot = _kabsch(before, after)
    angle = math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(rot) - 1) / 2))))
    if angle < 1e-6:
        return None
    axis_vec = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    k = int(np.argmax(np.abs(axis_vec)))
    if (
        np.abs(axis_vec).max() < 1e-9
        or np.sort(np.abs(axis_vec))[1] > 1e-6 * np.abs(axis_vec).max()
    ):
        return None
    return "xyz"[k], int(round(angle * np.sign(axis_vec[k])))


def recover_shift(before: np.ndarray, after: np.ndarray) -> str:
    """The ``move`` along the axis of the largest centroid shift, in whole Å."""
    shift = after.mean(0) - before.mean(0)
    k = int(np.argmax(np.abs(shift)))
    return f"move {'xyz'[k]} {int(round(shift[k]))}"

"""Operations applied to coordinates, and the six views (docs/spec.md section 1).

* **Screen frame**: right-handed, fixed to the camera; +x right, +y up, +z toward the viewer.
  Units are ångström and degrees. Its origin is the *scene centre*: the centre of the bounding
  box of the displayed atoms in the front view, so screen coordinates = model coordinates -
  scene centre (the front view keeps the input file's own axes).
* **Model centre**: the centre of the model's bounding box in its *untransformed* pose, carried
  rigidly with the model. (Re-taking the bounding box after each rotation would move the pivot,
  so ``roll`` then its inverse would not be the identity.)
* **Views**: rotations of the whole scene about the scene centre (the screen origin), applied
  after the operations: front = identity, left = roll y +90, right = roll y -90,
  top = roll x +90, bottom = roll x -90, back = roll y 180.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .language import AXIS_INDEX, Move, Operation, Roll, check_axis

VIEW_NAMES: tuple[str, ...] = ("front", "left", "right", "top", "bottom", "back")


def rotation_matrix(axis: str, angle_deg: float) -> np.ndarray:
    """3x3 right-hand-rule rotation about a screen axis by ``angle_deg`` degrees."""
    check_axis(axis)
    a = math.radians(angle_deg)
    c, s = _exact_cos_sin(angle_deg, a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=np.float64)
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], dtype=np.float64)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float64)


def _exact_cos_sin(angle_deg: float, radians: float) -> tuple[float, float]:
    """cos/sin with exact values at multiples of 90 degrees (so views are exact permutations)."""
    if float(angle_deg).is_integer() and int(angle_deg) % 90 == 0:
        quarter = (int(angle_deg) // 90) % 4
        return [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][quarter]
    return math.cos(radians), math.sin(radians)


@dataclass(frozen=True, eq=False)
class Pose:
    """A rigid placement of a model: ``x' = R x + t`` on screen coordinates, with the model's
    body-fixed centre ``centre`` (untransformed screen coordinates, Å) used as roll pivot."""

    rotation: np.ndarray
    translation: np.ndarray
    centre: np.ndarray

    @staticmethod
    def identity(centre: np.ndarray) -> Pose:
        return Pose(np.eye(3), np.zeros(3), np.asarray(centre, dtype=np.float64).copy())

    @property
    def current_centre(self) -> np.ndarray:
        return self.rotation @ self.centre + self.translation

    def then(self, op: Operation) -> Pose:
        """The pose after also applying ``op`` (in the screen frame)."""
        if isinstance(op, Move):
            step = np.zeros(3)
            step[AXIS_INDEX[op.axis]] = op.distance
            return Pose(self.rotation, self.translation + step, self.centre)
        rot = rotation_matrix(op.axis, op.angle)
        pivot = self.current_centre
        return Pose(rot @ self.rotation, rot @ (self.translation - pivot) + pivot, self.centre)

    def then_all(self, ops: Iterable[Operation]) -> Pose:
        pose = self
        for op in ops:
            pose = pose.then(op)
        return pose

    def apply(self, coords: np.ndarray) -> np.ndarray:
        """Transform (N, 3) screen coordinates."""
        return np.asarray(coords, dtype=np.float64) @ self.rotation.T + self.translation


def bbox_centre(coords: np.ndarray) -> np.ndarray:
    """Centre of the axis-aligned bounding box of (N, 3) coordinates (Å)."""
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[0] == 0 or coords.shape[1] != 3:
        raise ValueError(f"need a non-empty (N, 3) coordinate array, got shape {coords.shape}")
    return (coords.min(axis=0) + coords.max(axis=0)) / 2.0


def apply_operations(
    coords: np.ndarray, ops: Sequence[Operation], centre: np.ndarray | None = None
) -> np.ndarray:
    """Apply ``ops`` in order to (N, 3) screen coordinates of one rigid model.

    ``centre`` is the model's body-fixed roll pivot; by default the centre of its bounding box.
    """
    coords = np.asarray(coords, dtype=np.float64)
    if centre is None:
        centre = bbox_centre(coords)
    return Pose.identity(centre).then_all(ops).apply(coords)


VIEW_ROTATIONS: dict[str, tuple[Roll, ...]] = {
    "front": (),
    "left": (Roll("y", 90),),
    "right": (Roll("y", -90),),
    "top": (Roll("x", 90),),
    "bottom": (Roll("x", -90),),
    "back": (Roll("y", 180),),
}


def view_matrix(view: str) -> np.ndarray:
    """Rotation taking front-view screen coordinates to ``view`` (about the screen origin)."""
    if view not in VIEW_ROTATIONS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEW_NAMES)}")
    mat = np.eye(3)
    for roll in VIEW_ROTATIONS[view]:
        mat = rotation_matrix(roll.axis, roll.angle) @ mat
    return mat


def apply_view(coords: np.ndarray, view: str) -> np.ndarray:
    """Rotate screen coordinates of the whole scene into ``view`` (about the scene centre)."""
    return np.asarray(coords, dtype=np.float64) @ view_matrix(view).T

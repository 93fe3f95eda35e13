"""Screen frame, camera, the six views and the operation language.

Conventions (SPEC section 1):

* **Screen frame**: right-handed, fixed to the camera; +x right, +y up, +z toward the viewer.
  Units are ångström and degrees. Its origin is the *scene centre*: the centre of the bounding
  box of the displayed atoms in the front view, so screen coordinates = model coordinates -
  scene centre (the front view keeps the input file's own axes).
* **Operations**: ``move x|y|z D`` translates the shown model by D Å along a screen axis;
  ``roll x|y|z A`` rotates it by A degrees (right-hand rule) about the screen axis through the
  model's own centre. Magnitudes are integers. A sequence is written ``op, op, ...`` and applied
  in order.
* **Model centre**: the centre of the model's bounding box in its *untransformed* pose, carried
  rigidly with the model. (Re-taking the bounding box after each rotation would move the pivot,
  so ``roll`` then its inverse would not be the identity.)
* **Views**: rotations of the whole scene about the scene centre (the screen origin), applied
  after the operations: front = identity, left = roll y +90, right = roll y -90,
  top = roll x +90, bottom = roll x -90, back = roll y 180.
* **Camera**: perspective, looking down -z from (0, 0, distance), vertical field of view
  ``fov_deg`` on a square image. A point at screen (x, y, z) has depth ``distance - z`` and
  pixel coordinates ``u = W/2 + f x / depth``, ``v = H/2 - f y / depth`` with
  ``f = (W/2) / tan(fov/2)`` (pixel centres at half-integers, origin top-left).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence, Union

import numpy as np

from .errors import OperationSyntaxError

Axis = Literal["x", "y", "z"]
AXES: tuple[str, str, str] = ("x", "y", "z")
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}

VIEW_NAMES: tuple[str, ...] = ("front", "left", "right", "top", "bottom", "back")


@dataclass(frozen=True)
class Move:
    """Translate the shown model by ``distance`` Å along screen ``axis``."""

    axis: str
    distance: int

    def __post_init__(self) -> None:
        _check_axis(self.axis)
        if not isinstance(self.distance, (int, np.integer)) or isinstance(self.distance, bool):
            raise OperationSyntaxError(f"move distance must be an integer, got {self.distance!r}")
        object.__setattr__(self, "distance", int(self.distance))

    verb = "move"

    @property
    def magnitude(self) -> int:
        return self.distance

    def inverse(self) -> "Move":
        return Move(self.axis, -self.distance)

    def __str__(self) -> str:
        return f"move {self.axis} {self.distance}"


@dataclass(frozen=True)
class Roll:
    """Rotate the shown model by ``angle`` degrees about screen ``axis`` through its centre."""

    axis: str
    angle: int

    def __post_init__(self) -> None:
        _check_axis(self.axis)
        if not isinstance(self.angle, (int, np.integer)) or isinstance(self.angle, bool):
            raise OperationSyntaxError(f"roll angle must be an integer, got {self.angle!r}")
        object.__setattr__(self, "angle", int(self.angle))

    verb = "roll"

    @property
    def magnitude(self) -> int:
        return self.angle

    def inverse(self) -> "Roll":
        return Roll(self.axis, -self.angle)

    def __str__(self) -> str:
        return f"roll {self.axis} {self.angle}"


Operation = Union[Move, Roll]


def _check_axis(axis: object) -> None:
    if axis not in _AXIS_INDEX:
        raise OperationSyntaxError(f"axis must be one of x, y, z, got {axis!r}")


_OP_RE = re.compile(r"^\s*(move|roll)\s+([xyz])\s+([+-]?\d+)\s*$")


def parse_operation(text: str) -> Operation:
    """Parse one operation, e.g. ``"roll y -30"`` (strict: lower-case, integer magnitude)."""
    match = _OP_RE.match(text)
    if match is None:
        raise OperationSyntaxError(f"not an operation: {text!r} (expected e.g. 'move x 4' or 'roll y -30')")
    verb, axis, value = match.groups()
    return Move(axis, int(value)) if verb == "move" else Roll(axis, int(value))


def parse_operations(text: str) -> tuple[Operation, ...]:
    """Parse ``"op, op, ..."`` into a tuple of operations (strict; see the scorer for lenient)."""
    parts = [p for p in text.split(",")]
    if not text.strip() or any(not p.strip() for p in parts):
        raise OperationSyntaxError(f"not an operation sequence: {text!r}")
    return tuple(parse_operation(p) for p in parts)


def format_operations(ops: Iterable[Operation] | Operation) -> str:
    """Format operations as the benchmark writes them: ``"roll x 75, move x -14"``."""
    if isinstance(ops, (Move, Roll)):
        ops = (ops,)
    return ", ".join(str(op) for op in ops)


def invert_operations(ops: Sequence[Operation]) -> tuple[Operation, ...]:
    """The sequence that undoes ``ops`` (inverses in reverse order)."""
    return tuple(op.inverse() for op in reversed(ops))


def rotation_matrix(axis: str, angle_deg: float) -> np.ndarray:
    """3x3 right-hand-rule rotation about a screen axis by ``angle_deg`` degrees."""
    _check_axis(axis)
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
    def identity(centre: np.ndarray) -> "Pose":
        return Pose(np.eye(3), np.zeros(3), np.asarray(centre, dtype=np.float64).copy())

    @property
    def current_centre(self) -> np.ndarray:
        return self.rotation @ self.centre + self.translation

    def then(self, op: Operation) -> "Pose":
        """The pose after also applying ``op`` (in the screen frame)."""
        if isinstance(op, Move):
            step = np.zeros(3)
            step[_AXIS_INDEX[op.axis]] = op.distance
            return Pose(self.rotation, self.translation + step, self.centre)
        rot = rotation_matrix(op.axis, op.angle)
        pivot = self.current_centre
        return Pose(rot @ self.rotation, rot @ (self.translation - pivot) + pivot, self.centre)

    def then_all(self, ops: Iterable[Operation]) -> "Pose":
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


def apply_operations(coords: np.ndarray, ops: Sequence[Operation], centre: np.ndarray | None = None) -> np.ndarray:
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


@dataclass(frozen=True)
class Camera:
    """Perspective camera on the +z axis of the screen frame, looking at the origin.

    ``distance`` is in Å from the screen origin; ``fov_deg`` is the full field of view;
    images are ``size`` x ``size`` pixels. ``near`` is the clipping distance in Å.
    """

    distance: float
    fov_deg: float = 30.0
    size: int = 512
    near: float = 1.0

    @property
    def focal_px(self) -> float:
        """Focal length in pixels: (size / 2) / tan(fov / 2)."""
        return (self.size / 2.0) / math.tan(math.radians(self.fov_deg) / 2.0)

    def depth(self, coords: np.ndarray) -> np.ndarray:
        """Distance in front of the camera along -z (Å) of (N, 3) screen coordinates."""
        return self.distance - np.asarray(coords, dtype=np.float64)[:, 2]

    def project(self, coords: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) as (u, v), origin at the image's top-left corner.

        Points at or behind the near plane get NaN.
        """
        coords = np.asarray(coords, dtype=np.float64)
        depth = self.depth(coords)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(depth > self.near, self.focal_px / depth, np.nan)
        u = self.size / 2.0 + coords[:, 0] * scale
        v = self.size / 2.0 - coords[:, 1] * scale
        return np.stack([u, v], axis=1)

    def visible(self, coords: np.ndarray, margin_px: float = 0.0) -> np.ndarray:
        """Boolean mask of points in front of the near plane and inside the image."""
        uv = self.project(coords)
        ok = np.isfinite(uv).all(axis=1)
        lo, hi = margin_px, self.size - margin_px
        with np.errstate(invalid="ignore"):
            ok &= (uv[:, 0] >= lo) & (uv[:, 0] <= hi) & (uv[:, 1] >= lo) & (uv[:, 1] <= hi)
        return ok


#: Extra radius (Å) around atom centres that the fitted camera keeps in view (sticks, labels).
FIT_PADDING = 2.0
#: Multiplier on the fitting distance: a small margin around the bounding sphere.
FIT_MARGIN = 1.05


def fit_camera(coords: np.ndarray, fov_deg: float = 30.0, size: int = 512, padding: float = FIT_PADDING) -> Camera:
    """Camera whose field of view just holds the bounding sphere of ``coords`` (screen frame,
    centred on the bounding-box centre, i.e. the screen origin), with a small margin.

    The sphere is centred at the screen origin and its radius is the largest atom distance from
    the origin plus ``padding`` Å. Distance = radius / sin(fov / 2) * FIT_MARGIN.
    """
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[0] == 0:
        raise ValueError("cannot fit a camera to an empty selection")
    radius = float(np.sqrt((coords**2).sum(axis=1)).max()) + padding
    distance = radius / math.sin(math.radians(fov_deg) / 2.0) * FIT_MARGIN
    return Camera(distance=distance, fov_deg=fov_deg, size=size)

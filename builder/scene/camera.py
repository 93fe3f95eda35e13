"""The perspective camera (docs/spec.md section 4).

Perspective, looking down -z from (0, 0, distance), vertical field of view ``fov_deg`` on a
square image. A point at screen (x, y, z) has depth ``distance - z`` and pixel coordinates
``u = W/2 + f x / depth``, ``v = H/2 - f y / depth`` with ``f = (W/2) / tan(fov/2)`` (pixel
centres at half-integers, origin top-left).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.constants import DEFAULT_IMAGE_SIZE, check_image_size
from ..core.errors import RenderError


@dataclass(frozen=True)
class Camera:
    """Perspective camera on the +z axis of the screen frame, looking at the origin.

    ``distance`` is in Å from the screen origin; ``fov_deg`` is the full field of view;
    images are ``size`` x ``size`` pixels: the camera is the one carrier of the image size (a
    size outside ``check_image_size``'s range raises RenderError). ``near`` is the clipping
    distance in Å.
    """

    distance: float
    fov_deg: float = 30.0
    size: int = DEFAULT_IMAGE_SIZE
    near: float = 1.0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "size", check_image_size(self.size))
        except ValueError as exc:
            raise RenderError(f"camera: {exc}") from None

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


def fit_camera(
    coords: np.ndarray,
    fov_deg: float = 30.0,
    size: int = DEFAULT_IMAGE_SIZE,
    padding: float = FIT_PADDING,
) -> Camera:
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


#: Extra radius (Å) a close-up of a small selection keeps around its atoms: room for the atom
#: names beside the outermost atoms (a ligand atom name is about 1-2 Å wide at close-up scale).
CLOSE_UP_PADDING = 2.5


def close_up(coords: np.ndarray, size: int = DEFAULT_IMAGE_SIZE) -> tuple[np.ndarray, Camera]:
    """``(centre, camera)`` of a close-up of ``coords`` (screen frame, Å): the bounding-box
    centre to put at the screen origin, and the camera fitted to the atoms around it with
    :data:`CLOSE_UP_PADDING` (the same camera for every view: the fit is rotation-invariant)."""
    coords = np.asarray(coords, dtype=np.float64)
    if coords.ndim != 2 or coords.shape[0] == 0:
        raise ValueError("cannot frame an empty selection")
    centre = (coords.min(axis=0) + coords.max(axis=0)) / 2.0
    return centre, fit_camera(coords - centre, size=size, padding=CLOSE_UP_PADDING)

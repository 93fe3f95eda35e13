"""Scene coordinates of a render request: operations, view rotation and projection (numpy only).

1. Front-view screen coordinates of the shown atoms (``Complex.screen_coords``, or the frame
   centred on ``request.origin``).
2. Each ``group`` of the request is moved as one rigid model by its operations
   (``transforms.Pose`` semantics: roll pivot = bounding-box centre of the group's atoms in
   untransformed screen coordinates).
3. The view rotation turns the whole scene about the screen origin (``transforms.view_matrix``).
4. ``request.camera.project`` gives pixel coordinates (the camera carries the image size).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.errors import RenderError
from ..core.records import Complex
from ..operations.transforms import Pose, bbox_centre, view_matrix
from .requests import RenderRequest


def check_atoms(complex_: Complex, atoms: Sequence[int], what: str = "atoms") -> np.ndarray:
    """``atoms`` as an int64 array; RenderError for an index out of range or a repeated one."""
    idx = np.asarray(atoms, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= complex_.n_atoms):
        raise RenderError(f"{complex_.pdb_id}: {what} index out of range 0..{complex_.n_atoms - 1}")
    if len(np.unique(idx)) != idx.size:
        raise RenderError(f"{complex_.pdb_id}: {what} repeat an atom index")
    return idx


def unmoved_screen(complex_: Complex, request: RenderRequest) -> np.ndarray:
    """Front-view screen coordinates (Å) of every atom of the complex before any operation:
    ``Complex.screen_coords``, or the input frame centred on ``request.origin``."""
    if request.origin is None:
        return complex_.screen_coords
    return complex_.coords - np.asarray(request.origin, dtype=np.float64)


def request_groups(
    complex_: Complex, request: RenderRequest, atoms: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray, tuple]]:
    """``(rows, members, ops)`` per group of the request: ``rows`` are the group's positions
    among the shown ``atoms`` (shown members only), ``members`` all its atom indices (the roll
    pivot is their bounding-box centre). RenderError for an empty group or an atom in two."""
    position = np.full(complex_.n_atoms, -1, dtype=np.int64)
    position[atoms] = np.arange(atoms.size)
    seen = np.zeros(complex_.n_atoms, dtype=bool)
    out = []
    for subset, ops in request.groups:
        members = check_atoms(complex_, subset, "group atoms")
        if members.size == 0:
            raise RenderError(f"{complex_.pdb_id}: empty group in render request")
        if seen[members].any():
            raise RenderError(f"{complex_.pdb_id}: an atom belongs to more than one group")
        seen[members] = True
        rows = position[members]
        out.append((rows[rows >= 0], members, ops))
    return out


def scene_coordinates(complex_: Complex, request: RenderRequest) -> np.ndarray:
    """Screen coordinates (len(request.atoms), 3), in ``request.atoms`` order, after the
    groups' operations and the view rotation. Raises RenderError for an empty selection."""
    atoms = check_atoms(complex_, request.atoms)
    if atoms.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    screen = unmoved_screen(complex_, request)
    coords = screen[atoms].astype(np.float64, copy=True)
    if request.groups:
        for rows, members, ops in request_groups(complex_, request, atoms):
            if rows.size == 0 or not ops:
                continue
            pose = Pose.identity(bbox_centre(screen[members])).then_all(ops)
            coords[rows] = pose.apply(coords[rows])
    if request.view != "front":
        coords = coords @ view_matrix(request.view).T
    return coords


def projected_atoms(
    complex_: Complex, request: RenderRequest
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(uv, depth, visible)`` of the shown atoms in ``request.atoms`` order: pixel
    coordinates (NaN when clipped), depth in Å, and whether the atom centre is in front of the
    near plane and inside the image. Samplers use it to reject invisible scenes."""
    coords = scene_coordinates(complex_, request)
    camera = request.camera
    return camera.project(coords), camera.depth(coords), camera.visible(coords)

"""The stages of ``batch._plan``: the numeric part of ``raster.render_rows`` as arrays over a
pose axis (projection, depth cue and radii, sticks, draw order, sprites, rows and columns drawn).

Each stage computes the same numbers by the same operations in the same order as the one-by-one
renderer, elementwise over poses (see :mod:`.batch` for why the bands then hold its pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .raster import fog_levels
from .requests import RenderRequest
from .shading import sphere_sprite
from .sticks import stick_polygons


@dataclass(frozen=True, eq=False)
class View:
    """The batched poses projected (``raster._frame`` elementwise; arrays pose x atom):
    ``poses`` the request positions kept, camera-space ``coords`` (Å), ``depth`` from the eye
    (Å), ``inv`` its inverse, screen ``u``, ``v`` (supersampled px), ``alive`` (atom drawn),
    ``focal`` (supersampled px) and ``half_img`` (the canvas centre, supersampled px)."""

    poses: np.ndarray
    coords: np.ndarray
    depth: np.ndarray
    inv: np.ndarray
    u: np.ndarray
    v: np.ndarray
    alive: np.ndarray
    focal: float
    half_img: float


def project(camera, ss: int, coords: np.ndarray) -> View:
    """Project every pose's atoms (``raster._frame``), keeping the poses whose atoms are all
    drawn (a pose with an undrawn atom goes one by one)."""
    size = int(camera.size)
    focal = camera.focal_px * ss
    depth = camera.distance - coords[..., 2]
    alive = depth > camera.near
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(alive, 1.0 / depth, 0.0)
    half_img = size * ss / 2.0
    u = half_img + coords[..., 0] * focal * inv
    v = half_img - coords[..., 1] * focal * inv
    limit = 4.0 * size * ss
    alive &= (np.abs(u - half_img) < limit) & (np.abs(v - half_img) < limit)
    poses = np.flatnonzero(alive.all(axis=1))
    return View(
        poses,
        coords[poses],
        depth[poses],
        inv[poses],
        u[poses],
        v[poses],
        alive[poses],
        focal,
        half_img,
    )


def fog_and_radii(scene, request: RenderRequest, view: View):
    """Per pose and atom: the depth-cue level (0 .. FOG_LEVELS - 1) and the sphere radius in
    quarter supersampled pixels (``raster.render_rows``, ``_bonds_and_radii``)."""
    style = request.style
    fog_level = fog_levels(request.camera, view.depth)
    bonded = np.zeros(view.depth.shape[1], dtype=bool)
    if scene.bonds.size:
        bonded[scene.bonds.ravel()] = True
    radius_a = np.where(bonded, style.atom_radius, style.lone_atom_radius)
    radius_q = np.maximum(np.rint(view.focal * radius_a * view.inv * 4.0), 2).astype(np.int64)
    return fog_level, radius_q


def all_sticks(scene, style, view: View, base, fog_level, ss: int):
    """The sticks of all poses in one ``stick_polygons`` call (the atoms of pose p numbered
    p * N + k): owner atom, phase, polygon (supersampled px) and colour of each."""
    n_pose, n = view.depth.shape
    bonds = scene.bonds
    if bonds.size and n_pose:
        every = (bonds[None, :, :] + (np.arange(n_pose) * n)[:, None, None]).reshape(-1, 2)
        flat = [a.reshape(-1) for a in (view.depth, view.u, view.v)]
        sticks = stick_polygons(
            every,
            view.coords.reshape(-1, 3),
            *flat,
            view.focal,
            view.half_img,
            style,
            base,
            fog_level.reshape(-1),
            ss,
        )
        if sticks is not None:
            return sticks
    return (
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        np.zeros((0, 8)),
        np.zeros((0, 3), np.int64),
    )


def draw_order(scene, view: View, owner, phase):
    """Draw order: per pose far to near, ties by atom index; sticks at their atom's turn
    (raster's keys, plus the pose; key2 = position in the pose's own stick list). Returns the
    sphere order, each sphere's and polygon's pose, the primitive order and each pose's start
    in it."""
    n_pose, n = view.depth.shape
    pose_of = np.repeat(np.arange(n_pose, dtype=np.int64), n)
    order = np.lexsort((np.tile(scene.atoms, n_pose), -view.depth.reshape(-1), pose_of))
    sphere_pose = pose_of[order]
    rank = np.empty(n_pose * n, dtype=np.int64)
    rank[order] = np.arange(n_pose * n) - sphere_pose * n
    poly_pose = owner // max(n, 1)
    by_pose = np.argsort(poly_pose, kind="stable")
    local = np.empty(len(owner), dtype=np.int64)
    local[by_pose] = np.arange(len(owner)) - np.searchsorted(poly_pose[by_pose], poly_pose[by_pose])
    span = 3 * n + 3
    key1 = np.concatenate(
        [sphere_pose * span + rank[order] * 3 + 1, poly_pose * span + rank[owner] * 3 + phase]
    )
    key2 = np.concatenate([np.zeros(n_pose * n, dtype=np.int64), local])
    prim = np.lexsort((key2, key1))
    prim_pose = np.concatenate([sphere_pose, poly_pose])[prim]
    prim_start = np.searchsorted(prim_pose, np.arange(n_pose + 1))
    return order, sphere_pose, poly_pose, prim, prim_start


def sprites(base, order, radius_q, fog_level, view: View, style):
    """One sphere sprite per distinct (colour, radius, fog level); for each sphere in draw
    order its sprite's index, top-left corner and size (supersampled px)."""
    ordered_base = base[order].astype(np.int64)
    rq, fl = radius_q.reshape(-1)[order], fog_level.reshape(-1)[order]
    colour_key = (ordered_base[:, 0] << 16) | (ordered_base[:, 1] << 8) | ordered_base[:, 2]
    distinct, which = np.unique((colour_key * 65536 + rq) * 256 + fl, return_inverse=True)
    table = [
        sphere_sprite(((c >> 16) & 255, (c >> 8) & 255, c & 255), r, f, float(style.fog), False)
        for c, r, f in ((k >> 24, (k >> 8) & 65535, k & 255) for k in distinct.tolist())
    ]
    which = which.reshape(-1)
    half = np.ceil(rq / 4.0 + 1.0)
    xs = np.floor(view.u.reshape(-1)[order] - half + 0.5).astype(np.int64)
    ys = np.floor(view.v.reshape(-1)[order] - half + 0.5).astype(np.int64)
    dims = np.array([(sp.width, sp.height) for sp in table], dtype=np.int64).reshape(-1, 2)[which]
    return table, which, xs, ys, dims


def extent(sphere_pose, xs, ys, dims, poly_pose, polys, n_pose: int, size: int, ss: int):
    """Rows drawn per pose (``raster._content_rows``, supersampled px, whole output rows) and
    columns drawn (output px); ``solo`` marks a pose clipped at the picture's top or bottom; the
    polygons come back with integer vertices (as Pillow truncates them)."""
    lo, hi = reduce_at(sphere_pose, ys, ys + dims[:, 1], n_pose)
    left, right = reduce_at(sphere_pose, xs, xs + dims[:, 0], n_pose)
    if len(polys):
        py, px = polys[:, 1::2], polys[:, 0::2]
        lo, hi = merge(
            (lo, hi),
            reduce_at(poly_pose, np.floor(py.min(1)) - 2, np.ceil(py.max(1)) + 2, n_pose),
        )
        left, right = merge(
            (left, right), reduce_at(poly_pose, np.floor(px.min(1)) - 2, px.max(1) + 2, n_pose)
        )
    # a drawing past the picture's top or bottom edge is clipped there: drawn on a sheet of
    # its own that is exactly the picture
    solo = (lo < 0) | (hi > size * ss)
    top = np.maximum(0, lo - lo % ss - ss)
    bottom = np.minimum(size * ss, hi + ss + (-hi) % ss)
    if len(polys):
        # Pillow truncates vertices to integers: so does this, after raster's (exact)
        # subtraction of the pose's first drawn row, which it then adds back
        y0 = np.repeat(top[poly_pose], 4).reshape(-1, 4)
        polys = polys.copy()
        polys[:, 1::2] -= y0
        polys = polys.astype(np.int64)
        polys[:, 1::2] += y0
    return solo, top, bottom, left // ss, -(-right // ss), polys


def widen_for_labels(labels, solo, top, bottom, left, right, size: int, ss: int) -> None:
    """Grow each pose's rows and columns (in place) to hold its placed labels (output px);
    a label past the picture's top or bottom makes the pose ``solo``."""
    for p, placed in enumerate(labels):
        if placed:
            up, down = min(lb[1] for lb in placed), max(lb[1] + lb[4] for lb in placed)
            solo[p] |= up < 0 or down > size
            top[p] = min(top[p], max(0, up) * ss)
            bottom[p] = max(bottom[p], min(size, down) * ss)
            left[p] = min(left[p], min(lb[0] for lb in placed))
            right[p] = max(right[p], max(lb[0] + lb[3] for lb in placed))


def reduce_at(group: np.ndarray, low, high, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the least of ``low`` and the greatest of ``high`` (int64)."""
    lo = np.full(count, np.iinfo(np.int64).max // 4, dtype=np.int64)
    hi = np.full(count, np.iinfo(np.int64).min // 4, dtype=np.int64)
    np.minimum.at(lo, group, np.asarray(low).astype(np.int64))
    np.maximum.at(hi, group, np.asarray(high).astype(np.int64))
    return lo, hi


def merge(a, b):
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])

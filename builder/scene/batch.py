"""Many poses of one scene drawn at once: the audit's answer-space candidates.

The candidates of a question's answer space (T7: 252 poses of the displaced ligand; T1-T3: the
whole scene after each command) are render requests that differ only in their groups'
operations. :func:`render_stack` runs the numeric part of :func:`raster.render_rows` (pose
coordinates, projection, depth cue, sphere radii, sticks, sprites, draw order, rows and columns
drawn, label layout; the stages live in :mod:`.batch_plan`) once over all poses as arrays,
then draws the poses as the bands of a few sheets: one canvas, one downsampling and one pass of
labels per sheet instead of per pose.

Each band holds exactly the pixels of :func:`raster.render_image` for its request:

* every number is computed by the same operations in the same order, elementwise over a pose
  axis (``sticks.stick_polygons`` runs once over all poses, the atoms of pose ``p`` renumbered
  ``p * N + k``: it works bond by bond);
* a pose's drawing moves down to its band by whole rows only: sprite boxes are integers, and
  Pillow truncates polygon vertices to integers and fills scanlines from y differences, so this
  module truncates the vertices itself and adds the band's row offset to integers; bands start
  at multiples of the supersampling factor, so the downsampling averages the same pixels;
* nothing moves in x (Pillow's float32 x intercepts are not shift-invariant): a sheet's canvas
  keeps the columns from 0, and only its downsampling is limited to the columns drawn;
* a pose whose drawing or labels reach past the picture's top or bottom edge (clipped there) is
  drawn on a sheet of its own that is exactly the picture; a pose with an atom that is not drawn
  (behind the near plane, far off the picture) is drawn by ``raster.render_rows`` and pasted.

Ligand-only selections (T7) get their labels laid out over all poses at once (``batch_labels``:
``labels.layout_labels``'s rule as arrays); other selections call ``labels.layout_labels`` per
pose. ``tests/test_batch.py`` checks the bands against the one-by-one renderer pixel for pixel
on real questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from ..core.errors import RenderError
from ..core.records import Complex
from ..operations.transforms import Pose, bbox_centre, view_matrix
from .batch_labels import pose_labels
from .batch_plan import (
    all_sticks,
    draw_order,
    extent,
    fog_and_radii,
    project,
    sprites,
    widen_for_labels,
)
from .layout import draw_lines
from .pillow_core import ink, painter, polygon_filler
from .projection import check_atoms, request_groups, unmoved_screen
from .raster import reference_offsets, render_rows, shown_bonds
from .requests import RenderRequest
from .shading import atom_colours

#: Picture rows per sheet: a canvas of about 1 MB per 100 rows at 512 px, supersampled twice.
SHEET_ROWS = 480


@dataclass(frozen=True, eq=False)
class PoseSheet:
    """Pictures of some requests as bands of one RGB image holding their columns ``left ..
    left + image.width`` (every other column of these pictures is black).

    ``bands``: ``(request position, row, top, rows)``: that request's picture has its rows
    ``top .. top + rows`` at ``image`` rows ``row .. row + rows``; its other rows are black.
    ``left``, ``row``, ``top`` and ``rows`` are multiples of :func:`render_stack`'s ``align``."""

    image: Image.Image
    left: int
    bands: tuple[tuple[int, int, int, int], ...]


def scene_key(request: RenderRequest) -> tuple:
    """What the requests of one stack share: everything but the groups' operations."""
    return (
        request.atoms,
        tuple(subset for subset, _ in request.groups),
        request.origin,
        request.camera,
        request.style,
        request.view,
    )


@dataclass(frozen=True, eq=False)
class _Scene:
    atoms: np.ndarray
    screen: np.ndarray
    groups: tuple[tuple[np.ndarray, np.ndarray], ...]
    base: np.ndarray
    bonds: np.ndarray


def _scene(complex_: Complex, request: RenderRequest) -> _Scene:
    """The pose-independent part of the requests (validated as ``raster`` does)."""
    atoms = check_atoms(complex_, request.atoms)
    if atoms.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    screen = unmoved_screen(complex_, request)
    groups = tuple(
        (rows, bbox_centre(screen[members]))
        for rows, members, _ in request_groups(complex_, request, atoms)
    )
    return _Scene(
        atoms,
        screen[atoms].astype(np.float64, copy=True),
        groups,
        atom_colours(complex_, atoms),
        shown_bonds(complex_, atoms),
    )


def _pose_coordinates(scene: _Scene, requests: Sequence[RenderRequest]) -> np.ndarray:
    """(P, N, 3) scene coordinates, as ``raster`` computes them for each request. Poses that
    share a prefix of operations share its ``Pose``, and poses that share a rotation share the
    product of the group's coordinates with it (``Pose.apply`` is that product plus the
    translation, so the sums are the same numbers)."""
    poses: dict[tuple, Pose] = {}
    products: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    out = np.empty((len(requests), len(scene.atoms), 3))
    for p, request in enumerate(requests):
        coords = out[p]
        coords[:] = scene.screen
        for g, ((rows, centre), (_, ops)) in enumerate(zip(scene.groups, request.groups)):
            if rows.size == 0 or not ops:
                continue
            pose = _pose(poses, g, centre, tuple(ops))
            key = (g, id(pose.rotation))
            found = products.get(key)
            if found is None or found[0] is not pose.rotation:
                found = (pose.rotation, scene.screen[rows] @ pose.rotation.T)
                products[key] = found
            coords[rows] = found[1] + pose.translation
        if request.view != "front":
            out[p] = coords @ view_matrix(request.view).T
    return out


def _pose(poses: dict, g: int, centre: np.ndarray, ops: tuple) -> Pose:
    """``Pose.identity(centre).then_all(ops)`` built one operation at a time, each prefix once."""
    pose = poses.get((g, ops))
    if pose is None:
        pose = Pose.identity(centre) if not ops else _pose(poses, g, centre, ops[:-1]).then(ops[-1])
        poses[(g, ops)] = pose
    return pose


def render_stack(
    complex_: Complex,
    requests: Sequence[RenderRequest],
    align: int = 1,
    sheet_rows: int = SHEET_ROWS,
) -> tuple[PoseSheet, ...]:
    """The pictures of ``requests`` (all with the same :func:`scene_key`) as the bands of
    :class:`PoseSheet` s, in request order, at most about ``sheet_rows`` picture rows a sheet
    (small canvases stay in the processor's caches)."""
    requests = list(requests)
    if not requests:
        raise ValueError("render_stack needs at least one request")
    key = scene_key(requests[0])
    if any(scene_key(r) != key for r in requests[1:]):
        raise RenderError("render_stack: the requests differ in more than their operations")
    style = requests[0].style
    style.validate()
    plan = None if style.debug_ids else _plan(complex_, requests)
    align = max(1, int(align))
    size = int(requests[0].camera.size)
    parts: dict[int, tuple[Image.Image, int]] = {}
    spans, columns, solo = [], [], []
    for p, request in enumerate(requests):
        k = -1 if plan is None else plan.index.get(p, -1)
        if k < 0:
            part, top = parts[p] = render_rows(complex_, request)
            bottom, box = top + part.size[1], part.getbbox() or (0, 0, 1, 1)
            columns.append((box[0], box[2]))
        else:
            top, bottom = int(plan.top[k]), int(plan.bottom[k])
            columns.append((int(plan.left[k]), int(plan.right[k])))
        solo.append(k >= 0 and bool(plan.solo[k]))
        if solo[-1]:  # a sheet of its own, exactly the picture: the same clipping
            spans.append((0, size))
            columns[-1] = (0, size)
            continue
        first = top - top % align
        spans.append((first, max(-(-bottom // align) * align, first + align) - first))
    sheets, start = [], 0
    while start < len(requests):
        end, rows = start + 1, spans[start][1]
        while (
            not solo[start]
            and end < len(requests)
            and not solo[end]
            and rows + spans[end][1] <= sheet_rows
        ):
            rows, end = rows + spans[end][1], end + 1
        left = min(max(0, columns[p][0]) for p in range(start, end))
        left -= left % align
        right = max(min(size, columns[p][1]) for p in range(start, end))
        right = min(size, max(-(-right // align) * align, left + align))
        bands, row = [], 0
        for p in range(start, end):
            bands.append((p, row, spans[p][0], spans[p][1]))
            row += spans[p][1]
        sheets.append(_sheet(plan, parts, bands, left, right, size, int(style.supersample)))
        start = end
    return tuple(sheets)


@dataclass(eq=False)
class _Plan:
    """The batched poses' drawing (``index``: request position -> batched pose): draw order
    ``prim`` (pose by pose, ``prim_start``), sprites and boxes of the spheres, integer polygons,
    rows and columns drawn (final pixels), labels."""

    index: dict[int, int]
    solo: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    left: np.ndarray
    right: np.ndarray
    prim: np.ndarray
    prim_start: np.ndarray
    sphere_pose: np.ndarray
    boxes: np.ndarray
    cores: list
    poly_pose: np.ndarray
    points: np.ndarray
    inks: np.ndarray
    labels: list


def _sheet(plan, parts, bands, left: int, right: int, size: int, ss: int) -> PoseSheet:
    """Draw one sheet: the batched poses on one supersampled canvas (its columns start at 0:
    the polygon filler's x intercepts depend on x), each moved down to its band by whole rows,
    downsampled over the sheet's columns; then their labels; then the one-by-one pictures."""
    height = bands[-1][1] + bands[-1][3]
    mine = [(plan.index[p], row - top) for p, row, top, _ in bands if p not in parts]
    if mine:
        canvas = Image.new("RGB", (right * ss, height * ss), (0, 0, 0))
        shift = np.zeros(len(plan.top), dtype=np.int64)
        for k, by in mine:
            shift[k] = by * ss
        qs = np.concatenate(
            [plan.prim[plan.prim_start[k] : plan.prim_start[k + 1]] for k, _ in mine]
        )
        n_sph = len(plan.sphere_pose)
        is_sphere = qs < n_sph
        s_idx, p_idx = qs[is_sphere], qs[~is_sphere] - n_sph
        boxes = plan.boxes[s_idx]
        boxes[:, 1::2] += shift[plan.sphere_pose[s_idx]][:, None]
        points = plan.points[p_idx]
        points[:, 1::2] += shift[plan.poly_pose[p_idx]][:, None]
        spheres = zip([plan.cores[i] for i in s_idx.tolist()], boxes.tolist())
        sticks = zip(points.tolist(), plan.inks[p_idx].tolist())
        paste, polygon = painter(canvas), polygon_filler(canvas)
        for sphere in is_sphere.tolist():
            if sphere:
                core, box = next(spheres)
                paste(core, box, core)
            else:
                polygon(*next(sticks), 1)
        image = (
            canvas.reduce(ss, (left * ss, 0, right * ss, height * ss))
            if ss > 1
            else (canvas.crop((left, 0, right, height)))
        )
        paste_label = painter(image)
        for k, by in mine:
            draw_lines(image, [lb[5] for lb in plan.labels[k]], -left, by)
            for x, y, sprite, w, h, _ in plan.labels[k]:
                paste_label(sprite, (x - left, y + by, x - left + w, y + by + h), sprite)
    else:
        image = Image.new("RGB", (right - left, height), (0, 0, 0))
    for p, row, top, _ in bands:
        if p in parts:
            part, part_top = parts[p]
            image.paste(part.crop((left, 0, right, part.size[1])), (0, row + part_top - top))
    return PoseSheet(image, left, tuple(bands))


def _plan(complex_: Complex, requests: list[RenderRequest]) -> _Plan:
    """The numeric part of ``raster.render_rows`` for every pose whose atoms are all drawn and
    whose drawing and labels stay within the picture's rows."""
    first = requests[0]
    style, camera = first.style, first.camera
    size, ss = int(camera.size), int(style.supersample)
    scene = _scene(complex_, first)
    view = project(camera, ss, _pose_coordinates(scene, requests))
    n_pose = view.depth.shape[0]
    fog_level, radius_q = fog_and_radii(scene, first, view)
    base = np.tile(scene.base, (n_pose, 1))
    owner, phase, polys, rgb = all_sticks(scene, style, view, base, fog_level, ss)
    order, sphere_pose, poly_pose, prim, prim_start = draw_order(scene, view, owner, phase)
    table, which, xs, ys, dims = sprites(base, order, radius_q, fog_level, view, style)
    boxes = np.stack([xs, ys, xs + dims[:, 0], ys + dims[:, 1]], axis=1)
    solo, top, bottom, left, right, polys = extent(
        sphere_pose, xs, ys, dims, poly_pose, polys, n_pose, size, ss
    )
    labels = pose_labels(
        complex_,
        scene.atoms,
        first,
        view.u / ss,
        view.v / ss,
        view.alive,
        view.depth,
        radius_q / (4.0 * ss),
        [reference_offsets(complex_, requests[p]) for p in view.poses.tolist()],
    )
    widen_for_labels(labels, solo, top, bottom, left, right, size, ss)
    return _Plan(
        {int(p): k for k, p in enumerate(view.poses.tolist())},
        solo,
        top // ss,
        bottom // ss,
        left,
        right,
        prim,
        prim_start,
        sphere_pose,
        boxes,
        [table[i].core for i in which.tolist()],
        poly_pose,
        polys,
        _inks(rgb),
        labels,
    )


def _inks(rgb: np.ndarray) -> np.ndarray:
    """Pillow's ink value for each stick colour (one lookup per distinct colour)."""
    packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    uniq, ink_index = np.unique(packed, return_inverse=True)
    return (
        np.array(
            [ink(((c >> 16) & 255, (c >> 8) & 255, c & 255)) for c in uniq.tolist()],
            dtype=np.int64,
        )[ink_index.reshape(-1)]
        if len(uniq)
        else np.zeros(0, dtype=np.int64)
    )

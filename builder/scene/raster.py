"""The rasteriser: a render request to a Pillow image; a small, fast, deterministic stick renderer.

The picture is a *view of the geometry*: every answer in the benchmark is computed from
coordinates, so the renderer draws exactly the coordinates that :func:`scene_coordinates`
returns, projected with :meth:`camera.Camera.project`. Nothing here is decided from pixels.

Pipeline (one image):

1. **Scene coordinates** (``projection.scene_coordinates``): front-view screen coordinates of
   the shown atoms, each ``group`` moved as one rigid model by its operations, then the view
   rotation.
2. **Projection.** ``Camera.project`` with the camera of the request, which carries the image
   size (``Camera.size``). Atoms at or behind the near plane are clipped: not drawn, no labels,
   and a bond with a clipped end is not drawn.
3. **Painter's algorithm** at ``Style.supersample`` x the output size, far to near (ties broken
   by atom index). For each atom: the half-sticks that lead *away* from the viewer, then the
   atom's shaded sphere sprite, then the half-sticks that lead *toward* the viewer. A bond is two
   half-sticks, each coloured by its own atom; when both halves have the same colour (fog
   levels at most one step apart) the stick is drawn once, at its farther atom's turn. Sticks
   are Pillow polygons in ``Style.stick_bands`` bands (dark rim, lit body, and with 3 bands a
   highlight) that imitate a shaded cylinder lit from the upper left; spheres are precomputed,
   shaded, antialiased sprites pasted with Pillow (cached per colour, pixel radius and fog level).
4. **Downsample** (box filter) to the output size: antialiased edges.
5. **Labels** at the output size, on top of everything (``labels.draw_labels``).
6. **PNG** with fixed encoder settings (``cache.encode_png``), so the same request gives the
   same bytes.

Colours are in ``requests``, light and sprites in ``shading``. **Depth cueing**: colours fade
toward the black background with the distance from the camera; the fog ramp runs over the
camera's fitted bounding sphere (``camera.distance -+ R`` with
``R = distance * sin(fov / 2) / FIT_MARGIN``), so it depends only on the camera, and an atom
moved toward the viewer gets brighter.

Debug mode (``Style(debug_ids=True)``): every shown atom is a flat, hard-edged disc whose colour
encodes its position in ``request.atoms`` (:func:`id_colour` / :func:`decode_id`), no bonds,
labels, shading, fog or antialiasing, drawn at supersample 1 through the same projection,
ordering and sprite-pasting code as the real picture. Tests use it to check that the picture
matches the geometry to the pixel.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import repeat, starmap

import numpy as np
from PIL import Image

from ..core.errors import RenderError
from ..core.records import Complex
from ..operations.transforms import Pose, bbox_centre, view_matrix
from .camera import FIT_MARGIN
from .canvas import Canvas
from .extent import content_rows, downsample
from .labels import LabelAtoms, PlacedLabel, label_atoms, layout_labels, paste_labels
from .layout import ligand_footprint
from .placement import kept_offsets
from .projection import check_atoms, request_groups, unmoved_screen
from .requests import RenderRequest, in_plane_shift
from .shading import (
    FOG_LEVELS,
    Sprite,
    atom_colours,
    id_colour,
    place,
    sphere_sprite,
)
from .sticks import stick_polygons


def shown_bonds(complex_: Complex, atoms: np.ndarray) -> np.ndarray:
    """(M, 2) positions in ``atoms`` of bonds with both ends shown."""
    if complex_.bonds.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    position = np.full(complex_.n_atoms, -1, dtype=np.int64)
    position[atoms] = np.arange(atoms.size)
    pairs = position[np.asarray(complex_.bonds, dtype=np.int64).reshape(-1, 2)]
    keep = (pairs >= 0).all(axis=1) & (pairs[:, 0] != pairs[:, 1])
    return pairs[keep]


@dataclass(frozen=True, eq=False)
class _Static:
    """What a picture's pixels depend on besides the groups' operations and the view: the shown
    atoms, their untransformed screen coordinates and colours, the shown bonds, and each group's
    rows and roll pivot. The answer-space candidates of a question (and the views and operations
    of one complex) share it, so it is kept for the last few atom selections (``_static``)."""

    complex: Complex
    atoms: np.ndarray
    screen: np.ndarray
    groups: tuple[tuple[np.ndarray, np.ndarray], ...]
    base: np.ndarray
    bonds: np.ndarray

    @cached_property
    def labels(self) -> LabelAtoms:
        """The selection's label facts (``labels.label_atoms``), made on first use."""
        return label_atoms(self.complex, self.atoms)


_STATIC: OrderedDict[tuple, _Static] = OrderedDict()
_STATIC_ENTRIES = 16


def _static(complex_: Complex, request: RenderRequest) -> _Static:
    """The :class:`_Static` part of a request (validated as ``projection.scene_coordinates``
    does; errors are raised, never kept). Entries hold their complex, so ``id`` stays unique."""
    key = (
        id(complex_),
        request.atoms,
        tuple(subset for subset, _ in request.groups),
        request.origin,
    )
    found = _STATIC.get(key)
    if found is not None and found.complex is complex_:
        _STATIC.move_to_end(key)
        return found
    atoms = check_atoms(complex_, request.atoms)
    if atoms.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    screen = unmoved_screen(complex_, request)
    groups = []
    if request.groups:
        groups = [
            (rows, bbox_centre(screen[members]))
            for rows, members, _ in request_groups(complex_, request, atoms)
        ]
    found = _Static(
        complex_,
        atoms,
        screen[atoms].astype(np.float64, copy=True),
        tuple(groups),
        atom_colours(complex_, atoms),
        shown_bonds(complex_, atoms),
    )
    _STATIC[key] = found
    while len(_STATIC) > _STATIC_ENTRIES:
        _STATIC.popitem(last=False)
    return found


def _scene_coordinates(st: _Static, request: RenderRequest) -> np.ndarray:
    """``projection.scene_coordinates`` of a request from its :class:`_Static` part (the same
    operations in the same order, so the same numbers)."""
    coords = st.screen.copy()
    for (rows, centre), (_, ops) in zip(st.groups, request.groups):
        if rows.size == 0 or not ops:
            continue
        coords[rows] = Pose.identity(centre).then_all(ops).apply(coords[rows])
    if request.view != "front":
        coords = coords @ view_matrix(request.view).T
    return coords


@dataclass(frozen=True, eq=False)
class _Frame:
    """A request projected at the drawing size (``ss`` x the image size)."""

    static: _Static
    atoms: np.ndarray
    coords: np.ndarray
    size: int
    ss: int
    focal: float
    depth: np.ndarray
    alive: np.ndarray
    inv: np.ndarray
    half_img: float
    u: np.ndarray
    v: np.ndarray


def _frame(complex_: Complex, request: RenderRequest) -> _Frame:
    style = request.style
    style.validate()
    st = _static(complex_, request)
    atoms = st.atoms
    coords = _scene_coordinates(st, request)
    camera = request.camera
    size = int(camera.size)
    ss = 1 if style.debug_ids else int(style.supersample)
    focal = camera.focal_px * ss
    depth = camera.depth(coords)
    alive = depth > camera.near
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(alive, 1.0 / depth, 0.0)
    half_img = size * ss / 2.0
    u = half_img + coords[:, 0] * focal * inv
    v = half_img - coords[:, 1] * focal * inv
    limit = 4.0 * size * ss  # atoms farther off-image than this are not drawn
    alive &= (np.abs(u - half_img) < limit) & (np.abs(v - half_img) < limit)
    return _Frame(st, atoms, coords, size, ss, focal, depth, alive, inv, half_img, u, v)


def _bonds_and_radii(complex_: Complex, f: _Frame, style) -> tuple[np.ndarray, np.ndarray]:
    """Drawn bonds (positions in ``f.atoms``, both ends alive) and sphere radii in quarter
    pixels of the drawing size (bonded atoms ``atom_radius``, lone atoms ``lone_atom_radius``)."""
    bonds = f.static.bonds
    bonds = bonds[f.alive[bonds[:, 0]] & f.alive[bonds[:, 1]]] if bonds.size else bonds
    bonded = np.zeros(f.atoms.size, dtype=bool)
    if bonds.size:
        bonded[bonds.ravel()] = True
    radius_a = np.where(bonded, style.atom_radius, style.lone_atom_radius)
    return bonds, np.maximum(np.rint(f.focal * radius_a * f.inv * 4.0), 2).astype(np.int64)


def label_layout(complex_: Complex, request: RenderRequest) -> list[PlacedLabel]:
    """The labels of a request's picture as drawn (``labels.layout_labels``), without drawing
    (those of the last few pictures drawn are kept: the audit asks for the labels of the
    pictures it has just rendered)."""
    found = _LAYOUTS.get((id(complex_), request))
    if found is not None and found[0] is complex_:
        return list(found[1])
    f = _frame(complex_, request)
    if request.style.label_mode == "none" or request.style.debug_ids:
        return []
    return _labels(complex_, request, f, _bonds_and_radii(complex_, f, request.style)[1])


def reference_offsets(complex_: Complex, request: RenderRequest) -> tuple | None:
    """``(offsets, shift)``: the label offsets a request keeps from its reference picture
    (``placement.kept_offsets`` of the reference's layout, recomputed from the reference
    request in the request's own style) and whether the request is that picture shifted in its
    plane (``in_plane_shift``), or ``None`` without a reference (or not ``leader``)."""
    ref, style = request.reference, request.style
    if ref is None or style.label_placement != "leader" or style.label_mode == "none":
        return None
    if ref.style != style:
        ref = replace(ref, style=style)
    return kept_offsets(label_layout(complex_, ref)), in_plane_shift(request)


#: The labels of the last pictures drawn, by (complex id, request): (complex, labels).
_LAYOUTS: OrderedDict[tuple, tuple[Complex, tuple[PlacedLabel, ...]]] = OrderedDict()
_LAYOUTS_KEPT = 32


def _keep_layout(complex_: Complex, request: RenderRequest, placed: list[PlacedLabel]) -> None:
    _LAYOUTS[(id(complex_), request)] = (complex_, tuple(placed))
    _LAYOUTS.move_to_end((id(complex_), request))
    while len(_LAYOUTS) > _LAYOUTS_KEPT:
        _LAYOUTS.popitem(last=False)


def ligand_mask(complex_: Complex, request: RenderRequest) -> np.ndarray | None:
    """(size, size) bool mask of the ligand's drawn atoms and sticks in a request's picture, as
    the ``leader`` layout keeps labels off it (``layout.ligand_footprint``), or ``None`` when
    the picture shows no ligand atom or nothing else."""
    f = _frame(complex_, request)
    if request.style.debug_ids:
        return None
    _, radius_q = _bonds_and_radii(complex_, f, request.style)
    la = f.static.labels
    fp = ligand_footprint(
        f.u / f.ss,
        f.v / f.ss,
        f.alive,
        radius_q / (4.0 * f.ss),
        la.ligand,
        la.ligand_bonds,
        request.style.stick_radius / request.style.atom_radius,
        f.size,
    )
    return None if fp is None else fp.full(f.size)


def render_image(complex_: Complex, request: RenderRequest) -> Image.Image:
    """The picture of a request as a Pillow RGB image (``render_png`` encodes it)."""
    return _render(complex_, request, True)[0]


def render_rows(complex_: Complex, request: RenderRequest) -> tuple[Image.Image, int]:
    """``(part, top)``: the rows ``top .. top + part.height`` of the picture of a request, which
    hold everything drawn (every other row of :func:`render_image`'s picture is black)."""
    return _render(complex_, request, False)


def _render(complex_: Complex, request: RenderRequest, whole: bool) -> tuple[Image.Image, int]:
    """``render_rows`` of a request, or (``whole``) its whole picture and 0."""
    style = request.style
    f = _frame(complex_, request)
    size, ss, u, v = f.size, f.ss, f.u, f.v

    # Far to near, ties by atom index.
    order = np.lexsort((f.atoms, -f.depth))
    order = order[f.alive[order]]
    if style.debug_ids:
        return _render_ids(f, order, style), 0

    fog_level = fog_levels(request.camera, f.depth)
    bonds, radius_q = _bonds_and_radii(complex_, f, style)
    sticks = (
        stick_polygons(
            bonds, f.coords, f.depth, u, v, f.focal, f.half_img, style, f.static.base, fog_level, ss
        )
        if bonds.size
        else None
    )
    prim, polys = _draw_list(order, sticks, f.atoms.size)
    distinct_sprites, which, xs, ys, dims = _sphere_sprites(
        f, order, radius_q, fog_level, float(style.fog)
    )
    placed = _labels(complex_, request, f, radius_q)
    # labels are pasted onto the picture after the downsampling, so only the rows of primitives
    # are drawn (every other row is black); a band of rows (``render_rows``) holds the labels'
    # rows too, which are black but for the labels and their leader lines
    y0, y1 = content_rows(ys, dims, polys, size * ss, ss)
    if whole:
        top, height = 0, size
    else:
        b0, b1 = _band_rows(y0, y1, placed, size, ss)
        if b1 <= b0:
            return Image.new("RGB", (size, 1), (0, 0, 0)), 0
        top, height = b0 // ss, (b1 - b0) // ss
    if y1 <= y0:
        image = Image.new("RGB", (size, height), (0, 0, 0))
        paste_labels(image, placed, top)
        return image, top
    canvas = Canvas(size * ss, y1 - y0)
    if y0:
        ys = ys - y0
        polys = polys - np.array([0.0, y0] * 4, dtype=np.float64)
    inks: list = []
    if sticks is not None:
        uniq, ink_index = np.unique(_packed(sticks[3]), return_inverse=True)
        ink_table = [_INKS.get(c) or _ink(canvas, c) for c in uniq.tolist()]
        inks = list(map(ink_table.__getitem__, ink_index.reshape(-1).tolist()))
    boxes = list(zip(xs.tolist(), ys.tolist(), (xs + dims).tolist(), (ys + dims).tolist()))
    if canvas._core is not None and canvas._draw_core is not None:
        # Pillow's core calls with precomputed arguments, in draw order, driven from C
        # (``starmap``): about 2,000 polygons and 700 sprites per pocket image
        cores = [sp.core for sp in distinct_sprites]
        cores = list(map(cores.__getitem__, which))
        calls = list(zip(repeat(canvas._core.paste), cores, boxes, cores))
        calls += zip(
            repeat(canvas._draw_core.draw_polygon), _vertex_buffers(polys), inks, repeat(1)
        )
        deque(starmap(_call, map(calls.__getitem__, prim.tolist())), maxlen=0)
    else:  # pragma: no cover - public Pillow API only
        paste, fill = canvas.sprite_paster(), canvas.polygon_filler()
        sprites = [distinct_sprites[i] for i in which]
        polys_l, n_sph = polys.tolist(), order.size
        for p in prim.tolist():
            if p < n_sph:
                paste(sprites[p], boxes[p][0], boxes[p][1])
            else:
                fill(polys_l[p - n_sph], inks[p - n_sph])

    image = downsample(canvas.image, ss, size, xs, dims, polys, y0 // ss - top, height)
    paste_labels(image, placed, top)
    return image, top


def _labels(complex_: Complex, request: RenderRequest, f: _Frame, radius_q) -> list[PlacedLabel]:
    """The labels of a picture (``labels.layout_labels`` at the output size), kept for
    :func:`label_layout`."""
    if request.style.label_mode == "none":
        return []
    ss = f.ss
    placed = layout_labels(
        complex_,
        f.atoms,
        f.u / ss,
        f.v / ss,
        f.alive,
        f.depth,
        radius_q / (4.0 * ss),
        request.style,
        f.size,
        static=f.static.labels,
        keep=reference_offsets(complex_, request),
    )
    if placed:
        _keep_layout(complex_, request, placed)
    return placed


def _render_ids(f: _Frame, order: np.ndarray, style) -> Image.Image:
    """The debug picture: each drawn atom a flat disc coloured by its index (``id_colour``),
    far to near, no bonds, labels or fog."""
    canvas = Canvas(f.size * f.ss)
    paste = canvas.sprite_paster()
    radius_q = int(round(style.debug_radius_px * 4))
    for k in order.tolist():
        sprite = sphere_sprite(id_colour(k), radius_q, 0, 0.0, True)
        x, y = place(sprite, float(f.u[k]), float(f.v[k]))
        paste(sprite, x, y)
    return canvas.image


def fog_levels(camera, depth: np.ndarray) -> np.ndarray:
    """Depth-cue level per atom (0 .. FOG_LEVELS - 1) from its distance to the eye (Å): the fog
    ramp runs over the camera's fitted bounding sphere."""
    sphere_r = camera.distance * math.sin(math.radians(camera.fov_deg) / 2.0) / FIT_MARGIN
    near_d, far_d = camera.distance - sphere_r, camera.distance + sphere_r
    t = np.clip((depth - near_d) / max(far_d - near_d, 1e-9), 0.0, 1.0)
    return np.rint(t * (FOG_LEVELS - 1)).astype(np.int64)


def _draw_list(order: np.ndarray, sticks, n_atoms: int) -> tuple[np.ndarray, np.ndarray]:
    """``(prim, polys)``: the primitives in draw order (sphere ``k`` of ``order`` is ``k``,
    polygon ``j`` is ``len(order) + j``) and the stick polygons (supersampled px). At each
    atom's turn (far to near): the half-sticks leading away from the viewer (phase 0), the
    sphere (phase 1), the half-sticks leading toward the viewer (phase 2)."""
    n_sph = order.size
    if sticks is None:
        return np.arange(n_sph), np.zeros((0, 8))
    owner, phase, polys, _rgb = sticks
    rank = np.full(n_atoms, -1, dtype=np.int64)
    rank[order] = np.arange(n_sph)
    key1 = np.concatenate([rank[order] * 3 + 1, rank[owner] * 3 + phase])
    key2 = np.concatenate(
        [np.zeros(n_sph, dtype=np.int64), np.arange(polys.shape[0], dtype=np.int64)]
    )
    return np.lexsort((key2, key1)), polys


def _vertex_buffers(polys: np.ndarray) -> list[bytes]:
    """Each polygon's vertices as the bytes of eight float32 values, truncated toward zero:
    Pillow's polygon filler reads a buffer argument as float32 pairs and truncates every vertex
    to an integer (``(int)``), so the whole numbers it gets here (exact in float32) fill the same
    pixels as the float64 coordinates would, without a Python float per coordinate."""
    raw = np.trunc(polys).astype(np.float32).tobytes()
    return list(
        map(raw.__getitem__, map(slice, range(0, len(raw), 32), range(32, len(raw) + 32, 32)))
    )


def _packed(rgb: np.ndarray) -> np.ndarray:
    """Colours (rows of R, G, B) as one integer each, ``0xRRGGBB``."""
    return (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]


def _sphere_sprites(f: _Frame, order, radius_q, fog_level, fog_amount: float):
    """The spheres' sprites in draw order: the distinct sprites (one per colour, radius and fog
    level, cached), each sphere's index into them, and its box's corner and size (px)."""
    sprite_key = (_packed(f.static.base[order].astype(np.int64)) * 65536 + radius_q[order]) * 256
    sprite_key = sprite_key + fog_level[order]
    distinct, which = np.unique(sprite_key, return_inverse=True)
    known = _SPRITES.setdefault(fog_amount, {})
    distinct_sprites = [known.get(k) or _sprite(known, k, fog_amount) for k in distinct.tolist()]
    # a sprite is 2 * ceil(radius + 1) px square (``shading.sphere_sprite``)
    half = np.ceil(radius_q[order] / 4.0 + 1.0)
    xs = np.floor(f.u[order] - half + 0.5).astype(np.int64)
    ys = np.floor(f.v[order] - half + 0.5).astype(np.int64)
    return distinct_sprites, which.reshape(-1).tolist(), xs, ys, 2 * half.astype(np.int64)


def _band_rows(y0: int, y1: int, placed, size: int, ss: int) -> tuple[int, int]:
    """The rows of ``render_rows``' band (supersampled px): the primitives' rows ``y0 .. y1``
    (``extent.content_rows``) and those of the labels (a ligand-only view fills a fraction of
    the picture)."""
    if placed:
        tops = list(map(_TOP, placed))
        y0 = min(y0, max(0, min(tops)) * ss)
        y1 = max(y1, min(size, max(map(operator.add, tops, map(_HEIGHT, placed)))) * ss)
    return y0, y1


_TOP, _HEIGHT = operator.attrgetter("y"), operator.attrgetter("height")


#: Sphere sprites by fog amount, then by the packed key (colour, radius, fog level) of
#: ``_sphere_sprites``; and Pillow inks of RGB images by packed colour. Both bounded.
_SPRITES: dict[float, dict[int, Sprite]] = {}
_INKS: dict[int, object] = {}
_KEPT = 32768


def _sprite(known: dict, key: int, fog_amount: float) -> Sprite:
    if len(known) >= _KEPT:
        known.clear()
    c, radius_q, level = key >> 24, (key >> 8) & 65535, key & 255
    rgb = ((c >> 16) & 255, (c >> 8) & 255, c & 255)
    known[key] = found = sphere_sprite(rgb, radius_q, level, fog_amount, False)
    return found


def _ink(canvas: Canvas, packed: int) -> object:
    if len(_INKS) >= _KEPT:
        _INKS.clear()
    _INKS[packed] = ink = canvas.ink(((packed >> 16) & 255, (packed >> 8) & 255, packed & 255))
    return ink


#: ``_call(f, *args) = f(*args)`` (in C from Python 3.11 on)
_call = getattr(operator, "call", lambda function, *args: function(*args))

"""Render requests to PNG bytes: a small, fast, deterministic stick renderer (numpy + Pillow).

The picture is a *view of the geometry*: every answer in the benchmark is computed from
coordinates, so the renderer draws exactly the coordinates that :func:`scene_coordinates`
returns, projected with :meth:`geometry.Camera.project`. Nothing here is decided from pixels.

Pipeline (one image):

1. **Scene coordinates.** Front-view screen coordinates of the shown atoms
   (``Complex.screen_coords``); each ``group`` of a request is moved as one rigid model by its
   operations (``geometry.Pose`` semantics: roll pivot = bounding-box centre of the group's atoms
   in untransformed screen coordinates); then the view rotation turns the whole scene about the
   screen origin (``geometry.apply_view``).
2. **Projection.** ``Camera.project`` with the camera of the request (its ``size`` replaced by
   ``Style.size``, which is the same picture at another resolution). Atoms at or behind the near
   plane are clipped: not drawn, no labels, and a bond with a clipped end is not drawn.
3. **Painter's algorithm** at ``Style.supersample`` x the output size, far to near (ties broken
   by atom index). For each atom: the half-sticks that lead *away* from the viewer, then the
   atom's shaded sphere sprite, then the half-sticks that lead *toward* the viewer. A bond is two
   half-sticks, each coloured by its own atom; when both halves have the same colour (fog
   levels at most one step apart) the stick is drawn once, at its farther atom's turn. Sticks
   are Pillow polygons in ``Style.stick_bands`` bands (dark rim, lit body, and with 3 bands a
   highlight) that imitate a shaded cylinder lit from the upper left; spheres are precomputed,
   shaded, antialiased sprites pasted with Pillow (cached per colour, pixel radius and fog level).
4. **Downsample** (box filter) to the output size: antialiased edges.
5. **Labels** at the output size, on top of everything: pocket residue labels (``ASN 460``) at the
   residue's CA (else the centre of its shown atoms), ligand atom names next to each ligand atom,
   or (``label_mode="residue_atoms"``) the atom names of the shown residue atoms. Glyph masks
   come from Pillow's bundled font (``ImageFont.load_default(size=...)``), no system fonts.
6. **PNG** with fixed encoder settings (:data:`PNG_COMPRESS_LEVEL`), so the same request gives the
   same bytes.

Colours and light (SPEC section 4): black background; O red, N blue, S yellow, P orange,
halogens greens, other elements CPK (unknown symbols: :data:`UNKNOWN_COLOUR`); ligand carbons
grey; pocket carbons alternate purple ``#BF99F2`` / orange ``#F2B366`` by the parity of the
residue's position in ``Complex.residues``. The light comes from the viewer's upper left.
**Depth cueing**: colours fade toward the black background with the distance from the camera;
the fog ramp runs over the camera's fitted bounding sphere (``camera.distance -+ R`` with
``R = distance * sin(fov / 2) / FIT_MARGIN``), so it depends only on the camera, and an atom
moved toward the viewer gets brighter.

Debug mode (``Style(debug_ids=True)``): every shown atom is a flat, hard-edged disc whose colour
encodes its position in ``request.atoms`` (:func:`id_colour` / :func:`decode_id`), no bonds,
labels, shading, fog or antialiasing, drawn at supersample 1 through the same projection,
ordering and sprite-pasting code as the real picture. Tests use it to check that the picture
matches the geometry to the pixel.
"""
from __future__ import annotations

import dataclasses
import io
import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..core.errors import RenderError
from .camera import FIT_MARGIN, Camera, fit_camera
from ..operations.transforms import VIEW_NAMES, VIEW_ROTATIONS, Pose, bbox_centre, view_matrix
from ..operations.language import Move, Operation, Roll
from ..core.records import Complex

#: Bump when the pictures change (goes into dataset metadata / cache keys of callers).
RENDER_VERSION = "2"

#: zlib level of the PNG encoder. Level 1 is the knee of the speed/size curve for these mostly
#: black pictures (see ``builder/scripts/bench_render.py``); it is fixed so bytes are stable.
PNG_COMPRESS_LEVEL = 1

#: Image sizes outside this range raise RenderError.
MIN_SIZE = 16
MAX_SIZE = 4096

LABEL_MODES = ("standard", "residue_atoms", "none")

# --- colours ------------------------------------------------------------------------------

LIGAND_CARBON = (0xB4, 0xB4, 0xB4)
POCKET_CARBONS = ((0xBF, 0x99, 0xF2), (0xF2, 0xB3, 0x66))
#: Colour of element symbols the table does not know (documented, tested; no error).
UNKNOWN_COLOUR = (0xFF, 0x14, 0x93)

#: Conventional CPK / Jmol-like colours (O red, N blue, S yellow, P orange, halogens green).
ELEMENT_COLOURS: dict[str, tuple[int, int, int]] = {
    "C": (0x90, 0x90, 0x90),
    "N": (0x30, 0x50, 0xF8),
    "O": (0xFF, 0x0D, 0x0D),
    "S": (0xFF, 0xFF, 0x30),
    "P": (0xFF, 0x80, 0x00),
    "F": (0x90, 0xE0, 0x50),
    "CL": (0x1F, 0xF0, 0x1F),
    "BR": (0x40, 0xA0, 0x30),
    "I": (0x30, 0x90, 0x20),
    "H": (0xFF, 0xFF, 0xFF),
    "B": (0xFF, 0xB5, 0xB5),
    "SE": (0xFF, 0xA1, 0x00),
    "SI": (0xF0, 0xC8, 0xA0),
    "AS": (0xBD, 0x80, 0xE3),
    "LI": (0xCC, 0x80, 0xFF),
    "NA": (0xAB, 0x5C, 0xF2),
    "K": (0x8F, 0x40, 0xD4),
    "MG": (0x8A, 0xFF, 0x00),
    "CA": (0x3D, 0xFF, 0x00),
    "MN": (0x9C, 0x7A, 0xC7),
    "FE": (0xE0, 0x66, 0x33),
    "CO": (0xF0, 0x90, 0xA0),
    "NI": (0x50, 0xD0, 0x50),
    "CU": (0xC8, 0x80, 0x33),
    "ZN": (0x7D, 0x80, 0xB0),
    "CD": (0xFF, 0xD9, 0x8F),
    "HG": (0xB8, 0xB8, 0xD0),
    "PT": (0xD0, 0xD0, 0xE0),
    "AU": (0xFF, 0xD1, 0x23),
    "AG": (0xC0, 0xC0, 0xC0),
    "RU": (0x24, 0x8F, 0x8F),
    "RH": (0x0A, 0x7D, 0x8C),
    "V": (0xA6, 0xA6, 0xAB),
    "CR": (0x8A, 0x99, 0xC7),
    "MO": (0x54, 0xB5, 0xB5),
    "W": (0x21, 0x94, 0xD6),
    "GA": (0xC2, 0x8F, 0x8F),
    "GE": (0x66, 0x8F, 0x8F),
    "SB": (0x9E, 0x63, 0xB5),
    "TE": (0xD4, 0x7A, 0x00),
    "SN": (0x66, 0x80, 0x80),
    "AL": (0xBF, 0xA6, 0xA6),
    "BE": (0xC2, 0xFF, 0x00),
    "XE": (0x42, 0x9E, 0xB0),
}

LIGAND_LABEL_COLOUR = (0xF2, 0xF2, 0xF2)

# --- light --------------------------------------------------------------------------------
_LIGHT = np.array([-0.40, 0.45, 0.80])
_LIGHT = _LIGHT / np.linalg.norm(_LIGHT)
_HALF = _LIGHT + np.array([0.0, 0.0, 1.0])
_HALF = _HALF / np.linalg.norm(_HALF)
_AMBIENT = 0.30
_DIFFUSE = 0.70
_SPECULAR = 0.35
_SHININESS = 30.0
#: Number of depth-cue levels (colours are quantised, so sprites and inks can be cached).
FOG_LEVELS = 24


@dataclass(frozen=True)
class Style:
    """How a picture looks (hashable; part of every render request).

    ``label_mode``: ``"standard"`` (ligand atom names and pocket residue labels ``ASN 460``),
    ``"residue_atoms"`` (ligand atom names and the atom names of the shown residue atoms, as in
    T4) or ``"none"``. Radii are in Å; ``label_px`` is the label font size at 512 px (scaled
    with ``size``); ``fog`` is the fraction of brightness lost at the far side of the scene.
    """

    label_mode: str = "standard"
    size: int = 512
    atom_radius: float = 0.27
    stick_radius: float = 0.20
    lone_atom_radius: float = 0.55
    fog: float = 0.55
    label_px: int = 13
    supersample: int = 2
    stick_bands: int = 2
    debug_ids: bool = False
    debug_radius_px: float = 2.5

    def validate(self) -> None:
        if self.label_mode not in LABEL_MODES:
            raise RenderError(f"unknown label_mode {self.label_mode!r}; expected one of {', '.join(LABEL_MODES)}")
        if not isinstance(self.size, (int, np.integer)) or isinstance(self.size, bool):
            raise RenderError(f"image size must be an integer number of pixels, got {self.size!r}")
        if not MIN_SIZE <= int(self.size) <= MAX_SIZE:
            raise RenderError(f"image size {self.size} px is outside {MIN_SIZE}..{MAX_SIZE}")
        if self.supersample not in (1, 2, 3, 4):
            raise RenderError(f"supersample must be 1..4, got {self.supersample!r}")
        if self.stick_bands not in (1, 2, 3):
            raise RenderError(f"stick_bands must be 1, 2 or 3, got {self.stick_bands!r}")
        for name in ("atom_radius", "stick_radius", "lone_atom_radius", "debug_radius_px"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= 5):
                raise RenderError(f"Style.{name} must be in (0, 5], got {value!r}")
        if not 0 <= self.fog < 1:
            raise RenderError(f"Style.fog must be in [0, 1), got {self.fog!r}")
        if not 4 <= self.label_px <= 200:
            raise RenderError(f"Style.label_px must be in 4..200, got {self.label_px!r}")


Group = tuple[tuple[int, ...], tuple[Operation, ...]]


@dataclass(frozen=True)
class RenderRequest:
    """Everything that determines one image (hashable: equal requests give equal bytes).

    ``atoms``: indices into the Complex arrays of the atoms shown (bonds are shown when both
    ends are). ``groups``: ``(atom subset, operations)`` pairs; each subset is moved as one rigid
    model by its operations (roll pivot = bounding-box centre of the *whole subset* in
    untransformed screen coordinates); atoms in no group stay put; an atom may be in at most one
    group. ``view``: one of ``geometry.VIEW_NAMES``. ``camera``: the question's camera.
    ``origin``: the model-frame point (Å) that becomes the screen origin; ``None`` means the
    complex's scene centre (bounding-box centre of all its atoms). A sub-scene such as one residue
    plus the ligand (T4) sets it to its own bounding-box centre so that it is framed centrally.
    """

    atoms: tuple[int, ...]
    camera: Camera
    groups: tuple[Group, ...] = ()
    view: str = "front"
    style: Style = Style()
    origin: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        if self.origin is not None:
            try:
                origin = tuple(float(v) for v in self.origin)
            except (TypeError, ValueError):
                origin = ()
            if len(origin) != 3 or not all(np.isfinite(origin)):
                raise RenderError(f"render request: origin must be three finite numbers, got {self.origin!r}")
            object.__setattr__(self, "origin", origin)
        try:
            atoms = tuple(int(i) for i in self.atoms)
            groups = tuple((tuple(int(i) for i in subset), tuple(ops)) for subset, ops in self.groups)
        except (TypeError, ValueError) as exc:
            raise RenderError(f"render request: atoms and groups must be integer indices ({exc})") from None
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "groups", groups)
        for _, ops in groups:
            for op in ops:
                if not isinstance(op, (Move, Roll)):
                    raise RenderError(f"render request: not an operation: {op!r}")
        if self.view not in VIEW_ROTATIONS:
            raise RenderError(f"unknown view {self.view!r}; expected one of {', '.join(VIEW_NAMES)}")
        if not isinstance(self.camera, Camera):
            raise RenderError(f"render request: camera must be a geometry.Camera, got {type(self.camera).__name__}")
        if not isinstance(self.style, Style):
            raise RenderError(f"render request: style must be a render.Style, got {type(self.style).__name__}")


# --- geometry -----------------------------------------------------------------------------


def _check_atoms(complex_: Complex, atoms: Sequence[int], what: str = "atoms") -> np.ndarray:
    idx = np.asarray(atoms, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= complex_.n_atoms):
        raise RenderError(f"{complex_.pdb_id}: {what} index out of range 0..{complex_.n_atoms - 1}")
    if len(np.unique(idx)) != idx.size:
        raise RenderError(f"{complex_.pdb_id}: {what} repeat an atom index")
    return idx


def scene_coordinates(complex_: Complex, request: RenderRequest) -> np.ndarray:
    """Screen coordinates (len(request.atoms), 3), in ``request.atoms`` order, after the
    groups' operations and the view rotation. Raises RenderError for an empty selection."""
    atoms = _check_atoms(complex_, request.atoms)
    if atoms.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    if request.origin is None:
        screen = complex_.screen_coords
    else:
        screen = complex_.coords - np.asarray(request.origin, dtype=np.float64)
    coords = screen[atoms].astype(np.float64, copy=True)
    if request.groups:
        position = np.full(complex_.n_atoms, -1, dtype=np.int64)
        position[atoms] = np.arange(atoms.size)
        seen = np.zeros(complex_.n_atoms, dtype=bool)
        for subset, ops in request.groups:
            members = _check_atoms(complex_, subset, "group atoms")
            if members.size == 0:
                raise RenderError(f"{complex_.pdb_id}: empty group in render request")
            if seen[members].any():
                raise RenderError(f"{complex_.pdb_id}: an atom belongs to more than one group")
            seen[members] = True
            rows = position[members]
            rows = rows[rows >= 0]
            if rows.size == 0 or not ops:
                continue
            pose = Pose.identity(bbox_centre(screen[members])).then_all(ops)
            coords[rows] = pose.apply(coords[rows])
    if request.view != "front":
        coords = coords @ view_matrix(request.view).T
    return coords


def image_camera(request: RenderRequest) -> Camera:
    """The request's camera at the image size (``Style.size``): same distance, fov, near."""
    if request.camera.size == request.style.size:
        return request.camera
    return dataclasses.replace(request.camera, size=int(request.style.size))


def projected_atoms(complex_: Complex, request: RenderRequest) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(uv, depth, visible)`` of the shown atoms in ``request.atoms`` order: pixel
    coordinates (NaN when clipped), depth in Å, and whether the atom centre is in front of the
    near plane and inside the image. Samplers use it to reject invisible scenes."""
    coords = scene_coordinates(complex_, request)
    camera = image_camera(request)
    return camera.project(coords), camera.depth(coords), camera.visible(coords)


# --- colours ------------------------------------------------------------------------------


def element_colour(symbol: str) -> tuple[int, int, int]:
    """CPK colour of an element symbol (case-insensitive); :data:`UNKNOWN_COLOUR` otherwise."""
    return ELEMENT_COLOURS.get(str(symbol).strip().upper(), UNKNOWN_COLOUR)


def atom_colours(complex_: Complex, atoms: np.ndarray) -> np.ndarray:
    """(N, 3) uint8 base colours of atoms: element colours, with ligand carbons grey and pocket
    carbons purple/orange by residue parity."""
    atoms = np.asarray(atoms, dtype=np.int64)
    symbols, inverse = np.unique(complex_.elements[atoms], return_inverse=True)
    table = np.array([element_colour(sym) for sym in symbols.tolist()], dtype=np.uint8).reshape(-1, 3)
    out = table[inverse.reshape(-1)]
    carbon = np.array([str(sym).strip().upper() == "C" for sym in symbols.tolist()], dtype=bool)[inverse.reshape(-1)]
    ligand = complex_.is_ligand[atoms]
    parity = complex_.residue_index[atoms] % 2
    out[carbon & ligand] = LIGAND_CARBON
    out[carbon & ~ligand & (parity == 0)] = POCKET_CARBONS[0]
    out[carbon & ~ligand & (parity == 1)] = POCKET_CARBONS[1]
    return out


def id_colour(k: int) -> tuple[int, int, int]:
    """Debug colour of the atom at position ``k`` of ``request.atoms`` (never black)."""
    v = int(k) + 1
    return ((v >> 16) & 255, (v >> 8) & 255, v & 255)


def decode_id(rgb: np.ndarray) -> np.ndarray:
    """Inverse of :func:`id_colour` on an (..., 3) uint8 array: position in request.atoms, or -1
    for background."""
    rgb = np.asarray(rgb).astype(np.int64)
    return ((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]) - 1


# --- sprites and inks ---------------------------------------------------------------------


def _fog_factor(level: int, style_fog: float) -> float:
    return 1.0 - style_fog * level / (FOG_LEVELS - 1)


@lru_cache(maxsize=32768)
def _sphere_sprite(rgb: tuple[int, int, int], radius_q: int, fog_level: int, style_fog: float, flat: bool) -> "_Sprite":
    """Shaded, antialiased sphere of radius ``radius_q / 4`` px as an RGBA sprite (``flat``: a
    hard-edged disc of one colour, for the debug mode)."""
    radius = radius_q / 4.0
    half = int(math.ceil(radius + 1.0))
    dim = 2 * half
    centre = half  # continuous coordinate of the centre; pixel centres are at k + 0.5
    grid = np.arange(dim, dtype=np.float64) + 0.5 - centre
    dx = grid[None, :]
    dy = grid[:, None]
    dist = np.sqrt(dx * dx + dy * dy)
    rgba = np.zeros((dim, dim, 4), dtype=np.uint8)
    if flat:
        inside = dist <= radius
        rgba[inside, :3] = rgb
        rgba[inside, 3] = 255
        return _make_sprite(rgba, centre)
    alpha = np.clip(radius + 0.5 - dist, 0.0, 1.0)
    nx = np.clip(dx / radius, -1, 1)
    ny = np.clip(-dy / radius, -1, 1)
    r2 = np.minimum(nx * nx + ny * ny, 1.0)
    scale = np.where(r2 > 0, np.sqrt(np.minimum(dist * dist / (radius * radius), 1.0) / np.maximum(r2, 1e-12)), 0)
    nx, ny = nx * scale, ny * scale
    nz = np.sqrt(np.clip(1.0 - nx * nx - ny * ny, 0.0, 1.0))
    diffuse = np.clip(nx * _LIGHT[0] + ny * _LIGHT[1] + nz * _LIGHT[2], 0.0, 1.0)
    spec = np.clip(nx * _HALF[0] + ny * _HALF[1] + nz * _HALF[2], 0.0, 1.0) ** _SHININESS * _SPECULAR
    fog = _fog_factor(fog_level, style_fog)
    base = np.asarray(rgb, dtype=np.float64) / 255.0
    colour = (base[None, None, :] * (_AMBIENT + _DIFFUSE * diffuse)[..., None] + spec[..., None]) * fog
    rgba[..., :3] = np.clip(np.rint(colour * 255.0), 0, 255).astype(np.uint8)
    rgba[..., 3] = np.rint(alpha * 255.0).astype(np.uint8)
    return _make_sprite(rgba, centre)


def _make_sprite(rgba: np.ndarray, centre: float) -> "_Sprite":
    image = Image.fromarray(rgba, "RGBA")
    image.load()
    return _Sprite(image, image.im, image.width, image.height, float(centre))


def _band_layout(bands: int) -> tuple[tuple[float, float, float], ...]:
    """Stick bands as (from, to, shade) across the stick width in units of its half-width,
    positive toward the light; shade = brightness of a cylinder normal at the band's middle."""
    lp = float(np.hypot(_LIGHT[0], _LIGHT[1]))
    lz = float(_LIGHT[2])

    def shade(s: float, spec: bool = False) -> float:
        nz = math.sqrt(max(0.0, 1.0 - s * s))
        d = max(0.0, s * lp + nz * lz)
        value = _AMBIENT + _DIFFUSE * d
        if spec:
            h = max(0.0, s * float(np.hypot(_HALF[0], _HALF[1])) + nz * float(_HALF[2]))
            value += _SPECULAR * h**_SHININESS
        return value

    if bands == 1:
        return ((-1.0, 1.0, shade(0.1)),)
    if bands == 2:
        return ((-1.0, 1.0, shade(-0.7)), (-0.55, 0.85, shade(0.2)))
    return ((-1.0, 1.0, shade(-0.75)), (-0.6, 0.9, shade(0.05)), (0.05, 0.55, shade(0.3, spec=True)))


@lru_cache(maxsize=8)
def _band_table(bands: int, style_fog: float) -> tuple[tuple[float, float], np.ndarray]:
    layout = _band_layout(bands)
    fog = np.array([_fog_factor(k, style_fog) for k in range(FOG_LEVELS)])
    shades = np.array([s for _, _, s in layout])
    return tuple((a, b) for a, b, _ in layout), fog[:, None] * shades[None, :]


@lru_cache(maxsize=64)
def _font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except (TypeError, ImportError, OSError):  # pragma: no cover - Pillow without FreeType
        return ImageFont.load_default()


@lru_cache(maxsize=16384)
def _label_sprite(text: str, px: int, colour: tuple[int, int, int]) -> tuple[object, int, int]:
    """(RGBA core image, width, height) of a label: coloured glyphs inside a 1-px black outline
    (keeps labels legible over sticks), pasted in one call."""
    outline, glyph, width, height = _label_masks(text, px)
    rgba = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    rgba.im.paste((0, 0, 0, 255), (0, 0, width, height), outline)
    rgba.im.paste(colour + (255,), (0, 0, width, height), glyph)
    rgba.load()
    return rgba.im, width, height


@lru_cache(maxsize=16384)
def _label_masks(text: str, px: int) -> tuple[object, object, int, int]:
    """(outline mask, glyph mask, width, height) of a label, masks as Pillow core images (for
    ``ImagingCore.paste``)."""
    font = _font(px)
    left, top, right, bottom = font.getbbox(text)
    width, height = int(right - left) + 4, int(bottom - top) + 4
    glyph = Image.new("L", (width, height), 0)
    ImageDraw.Draw(glyph).text((2 - left, 2 - top), text, font=font, fill=255)
    outline = Image.new("L", (width, height), 0)
    try:
        ImageDraw.Draw(outline).text((2 - left, 2 - top), text, font=font, fill=255, stroke_width=1)
    except (TypeError, ValueError):  # pragma: no cover - bitmap font without stroke support
        outline = glyph
    glyph.load()
    outline.load()
    return outline.im, glyph.im, width, height


# --- drawing ------------------------------------------------------------------------------


def _shown_bonds(complex_: Complex, atoms: np.ndarray) -> np.ndarray:
    """(M, 2) positions in ``atoms`` of bonds with both ends shown."""
    if complex_.bonds.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    position = np.full(complex_.n_atoms, -1, dtype=np.int64)
    position[atoms] = np.arange(atoms.size)
    pairs = position[np.asarray(complex_.bonds, dtype=np.int64).reshape(-1, 2)]
    keep = (pairs >= 0).all(axis=1) & (pairs[:, 0] != pairs[:, 1])
    return pairs[keep]


class _Canvas:
    """The supersampled picture plus the two drawing primitives (sprite paste, polygon fill).

    Thousands of primitives are drawn per picture, so the calls go straight to Pillow's C
    objects (``Image.im`` and ``ImageDraw.Draw(...).draw``, which Pillow's own ``paste`` and
    ``polygon`` call with the same arguments); if a Pillow version lacks them, the public
    methods are used instead, with the same pixels.
    """

    def __init__(self, size: int):
        self.image = Image.new("RGB", (size, size), (0, 0, 0))
        self.limit = 4.0 * size  # atoms farther off-image than this are not drawn
        public = ImageDraw.Draw(self.image)
        self._inks: dict[tuple[int, int, int], object] = {}
        try:
            core = self.image.im
            draw_core = public.draw
            if not (hasattr(core, "paste") and hasattr(draw_core, "draw_polygon") and hasattr(draw_core, "draw_ink")):
                raise AttributeError("Pillow core drawing API not available")
            self._core, self._draw_core = core, draw_core
        except AttributeError:  # pragma: no cover - depends on the Pillow build
            self._core = self._draw_core = None
            self._public = public

    def ink(self, rgb: tuple[int, int, int]) -> object:
        ink = self._inks.get(rgb)
        if ink is None:
            ink = self._draw_core.draw_ink(rgb) if self._draw_core is not None else rgb
            self._inks[rgb] = ink
        return ink

    def sprite_paster(self):
        """``paste(sprite, x, y)``: paste a cached sprite with its top-left corner at (x, y)."""
        if self._core is not None:
            core_paste = self._core.paste

            def paste(sprite: "_Sprite", x: int, y: int) -> None:
                core_paste(sprite.core, (x, y, x + sprite.width, y + sprite.height), sprite.core)
        else:  # pragma: no cover
            image = self.image

            def paste(sprite: "_Sprite", x: int, y: int) -> None:
                image.paste(sprite.image, (x, y), sprite.image)
        return paste

    def polygon_filler(self):
        """``fill(points, ink)``: fill a polygon given as a flat coordinate list."""
        if self._draw_core is not None:
            core_polygon = self._draw_core.draw_polygon

            def fill(points: list[float], ink: object) -> None:
                core_polygon(points, ink, 1)
        else:  # pragma: no cover
            public = self._public

            def fill(points: list[float], ink: object) -> None:
                public.polygon(points, fill=ink)
        return fill


@dataclass(frozen=True, eq=False)
class _Sprite:
    image: Image.Image
    core: object
    width: int
    height: int
    centre: float  # continuous offset from the top-left corner to the sphere centre


def _place(sprite: _Sprite, u: float, v: float) -> tuple[int, int]:
    """Top-left pixel at which a sprite is pasted so its centre lands nearest to (u, v)."""
    return int(math.floor(u - sprite.centre + 0.5)), int(math.floor(v - sprite.centre + 0.5))


def render_image(complex_: Complex, request: RenderRequest) -> Image.Image:
    """The picture of a request as a Pillow RGB image (``render_png`` encodes it)."""
    style = request.style
    style.validate()
    atoms = _check_atoms(complex_, request.atoms)
    if atoms.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    coords = scene_coordinates(complex_, request)
    camera = image_camera(request)
    size = int(style.size)
    ss = 1 if style.debug_ids else int(style.supersample)
    focal = camera.focal_px * ss
    depth = camera.depth(coords)
    alive = depth > camera.near
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(alive, 1.0 / depth, 0.0)
    half_img = size * ss / 2.0
    u = half_img + coords[:, 0] * focal * inv
    v = half_img - coords[:, 1] * focal * inv
    canvas = _Canvas(size * ss)
    limit = canvas.limit
    alive &= (np.abs(u - half_img) < limit) & (np.abs(v - half_img) < limit)

    # Far to near, ties by atom index.
    order = np.lexsort((atoms, -depth))
    order = order[alive[order]]

    paste = canvas.sprite_paster()
    if style.debug_ids:
        radius_q = int(round(style.debug_radius_px * 4))
        for k in order.tolist():
            sprite = _sphere_sprite(id_colour(k), radius_q, 0, 0.0, True)
            x, y = _place(sprite, float(u[k]), float(v[k]))
            paste(sprite, x, y)
        return canvas.image

    # Depth cue level per atom (fog ramp over the camera's fitted bounding sphere).
    sphere_r = camera.distance * math.sin(math.radians(camera.fov_deg) / 2.0) / FIT_MARGIN
    near_d, far_d = camera.distance - sphere_r, camera.distance + sphere_r
    t = np.clip((depth - near_d) / max(far_d - near_d, 1e-9), 0.0, 1.0)
    fog_level = np.rint(t * (FOG_LEVELS - 1)).astype(np.int64)
    base = atom_colours(complex_, atoms)

    bonds = _shown_bonds(complex_, atoms)
    bonds = bonds[alive[bonds[:, 0]] & alive[bonds[:, 1]]] if bonds.size else bonds
    bonded = np.zeros(atoms.size, dtype=bool)
    if bonds.size:
        bonded[bonds.ravel()] = True

    # Sphere radius in px (quarter-pixel steps), per atom.
    radius_a = np.where(bonded, style.atom_radius, style.lone_atom_radius)
    radius_q = np.maximum(np.rint(focal * radius_a * inv * 4.0), 2).astype(np.int64)

    # Draw list: at each atom's turn (far to near) the half-sticks leading away from the viewer
    # (phase 0), the sphere (phase 1), the half-sticks leading toward the viewer (phase 2).
    rank = np.full(atoms.size, -1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    sticks = _stick_polygons(bonds, coords, depth, u, v, focal, half_img, style, base, fog_level) if bonds.size else None
    n_sph = order.size
    if sticks is not None:
        owner, phase, polys, rgb = sticks
        n_poly = polys.shape[0]
        key1 = np.concatenate([rank[order] * 3 + 1, rank[owner] * 3 + phase])
        key2 = np.concatenate([np.zeros(n_sph, dtype=np.int64), np.arange(n_poly, dtype=np.int64)])
        prim = np.lexsort((key2, key1))
        packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
        uniq, ink_index = np.unique(packed, return_inverse=True)
        ink_table = [canvas.ink(((int(c) >> 16) & 255, (int(c) >> 8) & 255, int(c) & 255)) for c in uniq.tolist()]
        inks_l = [ink_table[i] for i in ink_index.reshape(-1).tolist()]
        polys_l = polys.tolist()
    else:
        prim = np.arange(n_sph)
        inks_l, polys_l = [], []

    # Sprites of the spheres, in draw order.
    # one sprite per distinct (colour, radius, fog level): look each up once, then index
    fog_amount = float(style.fog)
    ordered_base = base[order].astype(np.int64)
    colour_key = (ordered_base[:, 0] << 16) | (ordered_base[:, 1] << 8) | ordered_base[:, 2]
    sprite_key = (colour_key * 65536 + radius_q[order]) * 256 + fog_level[order]
    distinct, which = np.unique(sprite_key, return_inverse=True)
    distinct_sprites = [
        _sphere_sprite(((c >> 16) & 255, (c >> 8) & 255, c & 255), r, f, fog_amount, False)
        for c, r, f in ((k >> 24, (k >> 8) & 65535, k & 255) for k in distinct.tolist())]
    sprites = [distinct_sprites[i] for i in which.reshape(-1).tolist()]
    half = np.ceil(radius_q[order] / 4.0 + 1.0)
    xs = np.floor(u[order] - half + 0.5).astype(np.int64).tolist()
    ys = np.floor(v[order] - half + 0.5).astype(np.int64).tolist()

    if canvas._core is not None and canvas._draw_core is not None:
        # hot loop on Pillow's core calls with precomputed arguments (about 2,000 polygons and
        # 700 sprites per pocket image)
        core_paste, core_polygon = canvas._core.paste, canvas._draw_core.draw_polygon
        cores = [sp.core for sp in sprites]
        boxes = [(x, y, x + sp.width, y + sp.height) for sp, x, y in zip(sprites, xs, ys)]
        for p in prim.tolist():
            if p < n_sph:
                core = cores[p]
                core_paste(core, boxes[p], core)
            else:
                q = p - n_sph
                core_polygon(polys_l[q], inks_l[q], 1)
    else:  # pragma: no cover - public Pillow API only
        fill = canvas.polygon_filler()
        for p in prim.tolist():
            if p < n_sph:
                paste(sprites[p], xs[p], ys[p])
            else:
                fill(polys_l[p - n_sph], inks_l[p - n_sph])

    image = canvas.image
    if ss > 1:
        image = image.reduce(ss)
    if style.label_mode != "none":
        _draw_labels(image, complex_, atoms, u / ss, v / ss, alive, depth, radius_q / (4.0 * ss), style)
    return image


#: Sticks thinner than this half-width (final pixels) are drawn in one band (see _stick_polygons).
THIN_STICK_PX = 3.0


def _stick_polygons(bonds, coords, depth, u, v, focal, half_img, style, base, fog_level):
    """Band polygons of all half-sticks: ``(owner, phase, polys, rgb)`` with one row per band
    polygon, bands of one stick consecutive. ``owner`` is the atom at whose turn the polygon is
    drawn, ``phase`` 0 (before its sphere: leads away from the viewer) or 2 (after it),
    ``polys`` (P, 8) image coordinates, ``rgb`` (P, 3) int colours."""
    a, b = bonds[:, 0], bonds[:, 1]
    mid = (coords[a] + coords[b]) / 2.0
    mdepth = depth[a] * 0.5 + depth[b] * 0.5
    mu = half_img + mid[:, 0] * focal / mdepth
    mv = half_img - mid[:, 1] * focal / mdepth
    layout, band_inks = _band_table(int(style.stick_bands), float(style.fog))
    nb = len(layout)
    rs = float(style.stick_radius) * focal
    # Same colour and (nearly) the same fog on both halves: one full stick, drawn at the farther
    # atom's turn in the farther atom's shade (a one-level fog step is invisible; this saves a
    # third of the polygons of a pocket).
    same = (base[a] == base[b]).all(axis=1) & (np.abs(fog_level[a] - fog_level[b]) <= 1)
    # Light direction in image coordinates (v grows downward).
    lx, ly = float(_LIGHT[0]), float(-_LIGHT[1])
    owners, phases, polys_all, rgbs = [], [], [], []
    for first, second in ((a, b), (b, a)):
        # Half at `first`: from first to the midpoint, or to `second` when merged.
        ex = np.where(same, u[second], mu)
        ey = np.where(same, v[second], mv)
        ed = np.where(same, depth[second], mdepth)
        dx, dy = ex - u[first], ey - v[first]
        length = np.hypot(dx, dy)
        ok = length > 1e-6
        farther_first = (depth[first] > depth[second]) | ((depth[first] == depth[second]) & (first < second))
        ok &= ~same | farther_first  # merged sticks only once, at the farther atom
        rows = np.flatnonzero(ok)
        if rows.size == 0:
            continue
        f = first[rows]
        uf, vf, exr, eyr = u[f], v[f], ex[rows], ey[rows]
        nx = -dy[rows] / length[rows]
        ny = dx[rows] / length[rows]
        flip = (nx * lx + ny * ly) < 0
        nx = np.where(flip, -nx, nx)
        ny = np.where(flip, -ny, ny)
        w0 = rs / depth[f]
        w1 = rs / ed[rows]
        polys = np.empty((rows.size, nb, 8))
        rgb = np.empty((rows.size, nb, 3), dtype=np.int64)
        colours = base[f].astype(np.float64)
        fog = fog_level[f]
        for j, (s0, s1) in enumerate(layout):
            polys[:, j, 0] = uf + nx * s0 * w0
            polys[:, j, 1] = vf + ny * s0 * w0
            polys[:, j, 2] = uf + nx * s1 * w0
            polys[:, j, 3] = vf + ny * s1 * w0
            polys[:, j, 4] = exr + nx * s1 * w1
            polys[:, j, 5] = eyr + ny * s1 * w1
            polys[:, j, 6] = exr + nx * s0 * w1
            polys[:, j, 7] = eyr + ny * s0 * w1
            rgb[:, j] = np.clip(np.rint(colours * band_inks[fog, j][:, None]), 0, 255)
        keep = np.ones((rows.size, nb), dtype=bool)
        if nb > 1:
            # Thin sticks (half-width under THIN_STICK_PX final pixels) show no visible banding:
            # draw them as one full-width polygon in the one-band shade (saves a third of the
            # drawing time of a whole-pocket view; close-ups keep their bands).
            supersample = 2.0 * half_img / float(style.size)
            thin = np.maximum(w0, w1) / supersample < THIN_STICK_PX
            if thin.any():
                _, single_inks = _band_table(1, float(style.fog))
                rgb[thin, 0] = np.clip(np.rint(colours[thin] * single_inks[fog[thin], 0][:, None]), 0, 255)
                keep[thin, 1:] = False
        phase_rows = np.where(ed[rows] < depth[f], 2, 0)
        owners.append(np.repeat(f, nb)[keep.reshape(-1)])
        phases.append(np.repeat(phase_rows, nb)[keep.reshape(-1)])
        polys_all.append(polys.reshape(-1, 8)[keep.reshape(-1)])
        rgbs.append(rgb.reshape(-1, 3)[keep.reshape(-1)])
    if not owners:
        return None
    return np.concatenate(owners), np.concatenate(phases), np.concatenate(polys_all), np.concatenate(rgbs)


def _draw_labels(image, complex_, atoms, u, v, alive, depth, radius_px, style) -> None:
    size = image.size[0]
    px = max(6, int(round(style.label_px * size / 512.0)))
    inside = alive & (u >= 0) & (u < size) & (v >= 0) & (v < size)
    ligand = complex_.is_ligand[atoms]
    entries: list[tuple[int, float, float, float, str, tuple[int, int, int], bool]] = []
    # (layer, depth, u, v, text, colour, centred)
    if style.label_mode == "standard":
        # One label per shown residue, centred above its CA (else above the centre of its
        # shown atoms), in the residue's carbon colour, lightened.
        res_idx = complex_.residue_index[atoms]
        pocket = ~ligand & alive & (res_idx >= 0)
        rows = np.flatnonzero(pocket)
        if rows.size:
            residues, first = np.unique(res_idx[rows], return_index=True)
            slot = np.searchsorted(residues, res_idx[rows])
            count = np.bincount(slot, minlength=residues.size).astype(np.float64)
            lu = np.bincount(slot, weights=u[rows], minlength=residues.size) / count
            lv = np.bincount(slot, weights=v[rows], minlength=residues.size) / count
            ld = np.bincount(slot, weights=depth[rows], minlength=residues.size) / count
            ca_rows = rows[complex_.atom_names[atoms[rows]] == "CA"]
            if ca_rows.size:
                ca_res, ca_first = np.unique(res_idx[ca_rows], return_index=True)
                ca_k = ca_rows[ca_first]
                where = np.searchsorted(residues, ca_res)
                lu[where], lv[where], ld[where] = u[ca_k], v[ca_k], depth[ca_k]
            keep = (lu >= 0) & (lu < size) & (lv >= 0) & (lv < size)
            for r, x, y, d in zip(residues[keep].tolist(), lu[keep].tolist(), lv[keep].tolist(), ld[keep].tolist()):
                entries.append((0, d, x, y, complex_.residues[r].label, _RESIDUE_LABEL_COLOURS[r % 2], True))
        for k in np.flatnonzero(~ligand & inside & (res_idx < 0)).tolist():  # metal ions: element label
            entries.append((0, float(depth[k]), float(u[k]) + float(radius_px[k]), float(v[k]),
                            str(complex_.atom_names[atoms[k]]), LIGAND_LABEL_COLOUR, False))
    elif style.label_mode == "residue_atoms":
        res_idx = complex_.residue_index[atoms]
        for k in np.flatnonzero(~ligand & inside).tolist():
            r = int(res_idx[k])
            colour = _RESIDUE_LABEL_COLOURS[r % 2] if r >= 0 else LIGAND_LABEL_COLOUR
            entries.append((0, float(depth[k]), float(u[k]) + float(radius_px[k]), float(v[k]), str(complex_.atom_names[atoms[k]]), colour, False))
    for k in np.flatnonzero(ligand & inside).tolist():
        entries.append((1, float(depth[k]), float(u[k]) + float(radius_px[k]), float(v[k]), str(complex_.atom_names[atoms[k]]), LIGAND_LABEL_COLOUR, False))
    # Residue labels under ligand labels; within a layer far to near (ties: text, position).
    entries.sort(key=lambda e: (e[0], -e[1], e[4], e[2], e[3]))
    core = image.im
    for _, _, lu, lv, text, colour, centred in entries:
        if not text:
            continue
        sprite, w, h = _label_sprite(text, px, colour)
        if centred:
            x, y = int(round(lu - w / 2.0)), int(round(lv - h - 2))
        else:
            x, y = int(round(lu + 1)), int(round(lv - h / 2.0))
        core.paste(sprite, (x, y, x + w, y + h), sprite)


def _light(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return tuple(int(round(c + (255 - c) * 0.35)) for c in rgb)  # type: ignore[return-value]


_RESIDUE_LABEL_COLOURS = (_light(POCKET_CARBONS[0]), _light(POCKET_CARBONS[1]))


def encode_png(image: Image.Image) -> bytes:
    """PNG bytes with the fixed encoder settings (:data:`PNG_COMPRESS_LEVEL`)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def render_png(complex_: Complex, request: RenderRequest) -> bytes:
    """Render a request to PNG bytes (deterministic: equal requests give identical bytes)."""
    return encode_png(render_image(complex_, request))


# --- cache --------------------------------------------------------------------------------


class RenderCache:
    """Render each distinct (complex, request) once and share the bytes.

    The key is the complex's identity (``pdb_id``, ``ligand_code``, ``source``) plus the request.
    Least recently used entries are dropped beyond ``max_bytes`` (a full build renders hundreds
    of thousands of images; the cache only needs to cover the questions of one complex).
    """

    def __init__(self, max_bytes: int = 512 * 1024 * 1024):
        self.max_bytes = int(max_bytes)
        self.hits = 0
        self.misses = 0
        self._store: OrderedDict[tuple, bytes] = OrderedDict()
        self._bytes = 0

    @staticmethod
    def key(complex_: Complex, request: RenderRequest) -> tuple:
        return (complex_.pdb_id, complex_.ligand_code, complex_.source, request)

    def get(self, complex_: Complex, request: RenderRequest) -> bytes:
        key = self.key(complex_, request)
        data = self._store.get(key)
        if data is not None:
            self.hits += 1
            self._store.move_to_end(key)
            return data
        self.misses += 1
        data = render_png(complex_, request)
        self._store[key] = data
        self._bytes += len(data)
        while self._bytes > self.max_bytes and len(self._store) > 1:
            _, old = self._store.popitem(last=False)
            self._bytes -= len(old)
        return data

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, item: tuple[Complex, RenderRequest]) -> bool:
        return self.key(*item) in self._store

    def clear(self) -> None:
        self._store.clear()
        self._bytes = 0


# --- contact sheet ------------------------------------------------------------------------


def scene_camera(complex_: Complex, atoms: Iterable[int] | None = None, size: int = 512) -> Camera:
    """The fitted camera of a scene (``geometry.fit_camera`` of the shown atoms' screen coords)."""
    idx = np.arange(complex_.n_atoms) if atoms is None else _check_atoms(complex_, list(atoms))
    if idx.size == 0:
        raise RenderError(f"{complex_.pdb_id}: empty atom selection, nothing to render")
    return fit_camera(complex_.screen_coords[idx], size=size)


def contact_sheet(
    complex_: Complex,
    views: Sequence[str] = VIEW_NAMES,
    size: int = 512,
    columns: int = 3,
    atoms: Iterable[int] | None = None,
    groups: tuple[Group, ...] = (),
    style: Style | None = None,
    camera: Camera | None = None,
) -> bytes:
    """PNG grid of ``views`` (default: the six views), each tile ``size`` px with its view name
    as a caption. Atoms default to the whole complex (pocket + ligand), the camera to the fitted
    one; ``misi-bench preview`` is this function."""
    idx = tuple(range(complex_.n_atoms)) if atoms is None else tuple(int(i) for i in atoms)
    style = Style(size=size) if style is None else dataclasses.replace(style, size=size)
    style.validate()
    if not views:
        raise RenderError("contact sheet: no views given")
    camera = scene_camera(complex_, idx, size) if camera is None else camera
    columns = max(1, min(int(columns), len(views)))
    rows = (len(views) + columns - 1) // columns
    caption = max(14, size // 16)
    sheet = Image.new("RGB", (columns * size, rows * (size + caption)), (0, 0, 0))
    font = _font(max(8, int(caption * 0.7)))
    draw = ImageDraw.Draw(sheet)
    for n, view in enumerate(views):
        request = RenderRequest(atoms=idx, camera=camera, groups=groups, view=view, style=style)
        tile = render_image(complex_, request)
        x, y = (n % columns) * size, (n // columns) * (size + caption)
        draw.rectangle((x, y, x + size - 1, y + caption - 1), fill=(40, 40, 40))
        draw.text((x + size / 2.0, y + caption / 2.0), view, font=font, fill=(255, 255, 255), anchor="mm")
        sheet.paste(tile, (x, y + caption))
        draw.rectangle((x, y + caption, x + size - 1, y + caption + size - 1), outline=(60, 60, 60))
    return encode_png(sheet)

"""Render requests: what one picture shows and how it looks (no Pillow, no drawing).

A :class:`RenderRequest` is everything that determines one image: the shown atoms, the rigid
groups moved by operations, the view, the camera (which also carries the image size) and the
:class:`Style`. Requests are hashable, so equal requests give equal bytes and can share a cache
entry. Task generators build requests; ``raster`` draws them, ``cache`` encodes them as PNG.

Colours (docs/spec.md section 4): black background; O red, N blue, S yellow, P orange, halogens greens,
other elements CPK (unknown symbols: :data:`UNKNOWN_COLOUR`); ligand carbons grey; pocket
carbons alternate purple ``#BF99F2`` / orange ``#F2B366`` by the parity of the residue's
position in ``Complex.residues``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import RenderError
from ..operations.language import Move, Operation, Roll
from ..operations.transforms import VIEW_NAMES, VIEW_ROTATIONS
from .camera import Camera

#: Bump when the pictures change (goes into the build's config hash and the dataset metadata).
#: 3: collision-aware label placement (labels.layout_labels).
#: 4: labels an H-bond answer can need placed first, a second ring of slots, stuck labels kept
#: clear; label font grows with the square root of the image size above 512 px.
#: 5: ``leader`` placement (labels keep off each other and off the ligand, in free space with
#: leader lines where they move away from their atom); residue labels carry the chain in
#: pictures of more than one chain; T7's ligand views framed on the ligand.
#: 6: a pocket picture whose residues are all of one chain names it in a corner (``chain E``).
#: 7: sphere sprites blended premultiplied (``shading.make_sprite``): antialiased rim pixels
#: over a drawn neighbour at most one level apart from version 6 (0.13 % of the pixels).
#: 8: ``leader`` places residue labels (and T4's residue atom names) in the order of what the
#: picture shows, their px distance to the drawn ligand (``layout.picture_reach``), never the 3D
#: distance (issue 53).
#: 9: a question's later pictures keep the reference picture's label offsets from their atoms
#: wherever they still fit (``RenderRequest.reference``, ``placement.kept_offsets``; issue 53).
RENDER_VERSION = "9"

LABEL_MODES = ("standard", "residue_atoms", "none")
#: ``leader``: labels in free space, off the ligand, with leader lines; ``avoid``: the
#: collision-aware label placement of RENDER_VERSION 4; ``avoid3``: the placement of RENDER_VERSION 3
#: (for comparison); ``overlap``: every label at its default slot.
LABEL_PLACEMENTS = ("leader", "avoid", "avoid3", "overlap")

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


def element_colour(symbol: str) -> tuple[int, int, int]:
    """CPK colour of an element symbol (case-insensitive); :data:`UNKNOWN_COLOUR` otherwise."""
    return ELEMENT_COLOURS.get(str(symbol).strip().upper(), UNKNOWN_COLOUR)


@dataclass(frozen=True)
class Style:
    """How a picture looks (hashable; part of every render request).

    ``label_mode``: ``"standard"`` (ligand atom names and pocket residue labels ``ASN 460``),
    ``"residue_atoms"`` (ligand atom names and the atom names of the shown residue atoms, as in
    T4) or ``"none"``. ``label_placement``: see :data:`LABEL_PLACEMENTS`;
    ``chain_labels``: residue labels carry their chain (``ASN 460 B``) when the picture shows
    more than one chain. Radii are in Å; ``label_px`` is the label font size at
    :data:`~misi_bench.builder.core.constants.REFERENCE_IMAGE_SIZE` px (scaled with the camera's
    image size); ``fog`` is the fraction of brightness lost at the far side of the scene. The
    image size itself is not a style: the request's camera carries it (``Camera.size``).
    """

    label_mode: str = "standard"
    label_placement: str = "leader"
    chain_labels: bool = True
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
            raise RenderError(
                f"unknown label_mode {self.label_mode!r}; expected one of {', '.join(LABEL_MODES)}"
            )
        if self.label_placement not in LABEL_PLACEMENTS:
            raise RenderError(
                f"unknown label_placement {self.label_placement!r}; expected one of {', '.join(LABEL_PLACEMENTS)}"
            )
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
    group. ``view``: one of ``geometry.VIEW_NAMES``. ``camera``: the question's camera, which
    also sets the image size (``camera.size`` px square).
    ``origin``: the model-frame point (Å) that becomes the screen origin; ``None`` means the
    complex's scene centre (bounding-box centre of all its atoms). A sub-scene such as one residue
    plus the ligand (T4) sets it to its own bounding-box centre so that it is framed centrally.
    ``reference``: the request of the question's reference picture (its first), or ``None``:
    labels keep the offset from their atom they have in that picture wherever it still fits
    (``labels.layout_labels``' ``keep``; the offsets are recomputed from the reference request,
    never stored). It has no reference itself and the same image size; it is laid out in the
    request's own style (a request restyled keeps the offsets of its reference so restyled).
    """

    atoms: tuple[int, ...]
    camera: Camera
    groups: tuple[Group, ...] = ()
    view: str = "front"
    style: Style = Style()
    origin: tuple[float, float, float] | None = None
    reference: RenderRequest | None = None

    def __post_init__(self) -> None:
        if self.origin is not None:
            try:
                origin = tuple(float(v) for v in self.origin)
            except (TypeError, ValueError):
                origin = ()
            if len(origin) != 3 or not all(np.isfinite(origin)):
                raise RenderError(
                    f"render request: origin must be three finite numbers, got {self.origin!r}"
                )
            object.__setattr__(self, "origin", origin)
        try:
            atoms = tuple(map(int, self.atoms))
            groups = tuple((tuple(map(int, subset)), tuple(ops)) for subset, ops in self.groups)
        except (TypeError, ValueError) as exc:
            raise RenderError(
                f"render request: atoms and groups must be integer indices ({exc})"
            ) from None
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "groups", groups)
        for _, ops in groups:
            for op in ops:
                if not isinstance(op, (Move, Roll)):
                    raise RenderError(f"render request: not an operation: {op!r}")
        if self.view not in VIEW_ROTATIONS:
            raise RenderError(
                f"unknown view {self.view!r}; expected one of {', '.join(VIEW_NAMES)}"
            )
        if not isinstance(self.camera, Camera):
            raise RenderError(
                f"render request: camera must be a geometry.Camera, got {type(self.camera).__name__}"
            )
        if not isinstance(self.style, Style):
            raise RenderError(
                f"render request: style must be a scene.requests.Style, got {type(self.style).__name__}"
            )
        if self.reference is not None:
            self._check_reference()

    def _check_reference(self) -> None:
        ref = self.reference
        if not isinstance(ref, RenderRequest) or ref.reference is not None:
            raise RenderError(
                "render request: reference must be a RenderRequest without a reference of its own"
            )
        if ref.camera.size != self.camera.size:
            raise RenderError(
                "render request: reference must have the same image size "
                f"(got {ref.camera.size} px, the request {self.camera.size} px)"
            )


def in_plane_shift(request: RenderRequest) -> bool:
    """Whether a request is its reference's picture with the whole model moved along screen x
    and y only (T1's image 4): its labels then keep their offsets wherever they stay inside the
    frame, so the layout is the reference's, translated (each label with its own atom's
    projection: perspective moves near atoms a little more than far ones)."""
    ref = request.reference
    if ref is None or ref.groups or len(request.groups) != 1:
        return False
    (subset, ops), same = request.groups[0], (ref.atoms, ref.view, ref.camera, ref.origin)
    if same != (request.atoms, request.view, request.camera, request.origin):
        return False
    return set(subset) >= set(request.atoms) and all(
        isinstance(op, Move) and op.axis in ("x", "y") for op in ops
    )

"""A complex's annotation: what every question, check and picture of it starts from.

:func:`annotate` reads nothing: it takes a read :class:`~..core.records.Complex` and adds its
front-view screen coordinates (Å, origin = scene centre), the camera fitted to them and its
hydrogen bonds (``chemistry.hbonds.detect_hbonds`` in the build's ``--hbonds`` mode). It is the
join of the chemistry and scene layers, the lowest place that may import both; it sits in its
own module, apart from the generators' machinery (``base``), so that the build's units, the
checks, the CLI and the scripts reach it without the task contexts, data files and prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chemistry.hbonds import DEFAULT_HBOND_MODE, HBond, detect_hbonds
from ..core.constants import DEFAULT_IMAGE_SIZE
from ..core.records import Complex
from ..scene.camera import Camera, fit_camera


@dataclass(frozen=True, eq=False)
class Annotation:
    """What question generation needs of one complex: the record, its front-view screen
    coordinates (Å, origin = scene centre), the fitted camera and the hydrogen bonds."""

    complex: Complex
    screen: np.ndarray
    camera: Camera
    hbonds: tuple[HBond, ...]
    hbond_mode: str = DEFAULT_HBOND_MODE

    @property
    def pdb_id(self) -> str:
        return self.complex.pdb_id

    @property
    def all_atoms(self) -> tuple[int, ...]:
        return tuple(range(self.complex.n_atoms))


def annotate(
    cx: Complex, image_size: int = DEFAULT_IMAGE_SIZE, hbonds: str = DEFAULT_HBOND_MODE
) -> Annotation:
    """Compute the annotation of a complex (screen frame, camera, H-bonds by mode ``hbonds``)."""
    screen = cx.screen_coords
    return Annotation(
        cx, screen, fit_camera(screen, size=image_size), detect_hbonds(cx, hbonds), hbonds
    )

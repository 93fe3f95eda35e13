"""``No`` or ``Yes: RES ATOM, LIG_ATOM; ...`` (T4): the bonds of one named residue."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...core.registry import RESIDUE_BONDS, TaskSpec
from .bonds import BondsKind


class ResidueBonds(BondsKind):
    name = RESIDUE_BONDS
    named_residue = True

    def random_answer(self, spec: TaskSpec, record: Mapping, rng: np.random.Generator) -> str:
        """``Yes`` or ``No`` at random (a bare ``Yes`` lists no bond)."""
        if spec.commands:
            return super().random_answer(spec, record, rng)
        return "Yes" if rng.random() < 0.5 else "No"


KIND = ResidueBonds()

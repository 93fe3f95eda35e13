"""``None`` or ``RES NUMBER ATOM CHAIN, LIG_ATOM; ...`` (T9): every bond of the pocket."""

from __future__ import annotations

from ...core.registry import POCKET_BONDS
from .bonds import BondsKind


class PocketBonds(BondsKind):
    name = POCKET_BONDS
    paper_exact = True


KIND = PocketBonds()

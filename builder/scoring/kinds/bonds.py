"""What the two H-bond list kinds share (:mod:`.residue_bonds`, :mod:`.pocket_bonds`): the
set rule of docs/spec.md section 7, its precision/F1 readings, the task's ``halves`` metric."""

from __future__ import annotations

from collections.abc import Sequence

from ...core.registry import TaskSpec
from ..bonds import (
    KNOWN_RESIDUES,
    BondAnswer,
    align_chain_case,
    count_matched,
    format_bond_answer,
    gold_bonds,
    parse_bonds,
    set_score,
)
from ..readings import T9_PAPER_EXACT, alt_bonds
from .base import AnswerKind


class BondsKind(AnswerKind):
    """A list of H-bonds. ``named_residue``: the question names one residue (answers ``No`` or
    ``Yes: RES ATOM, LIG``) instead of asking for every bond of the pocket (``None`` or ``RES
    NUMBER ATOM CHAIN, LIG``); ``paper_exact``: report the paper's exact match on complexes
    with bonds (:data:`..readings.T9_PAPER_EXACT`)."""

    tables = True
    named_residue = False
    paper_exact = False
    audit = ("reproduction", "legibility", "rotamers")

    def gold(self, spec: TaskSpec, answer: str) -> BondAnswer:
        value = gold_bonds(answer, named_residue=self.named_residue)
        if value is None:
            raise ValueError("not a bond list")
        return value

    def residues(self, gold) -> frozenset:
        if isinstance(gold, BondAnswer) and gold.bonds:
            return KNOWN_RESIDUES | frozenset(k[0] for k in gold.bonds)
        return KNOWN_RESIDUES

    def parse_section(
        self, text: str, immediate: bool, options: Sequence[str] | None, residues: frozenset
    ):
        return parse_bonds(text, residues, named_residue=self.named_residue)

    def format(self, value) -> str:
        return format_bond_answer(value, named_residue=self.named_residue)

    def _halves(self, spec: TaskSpec, gold) -> dict[str, float]:
        """The metric that splits the task's paper column in two (T4: ``polarity`` 1 for a
        residue that makes H-bonds, 0 for one that makes none)."""
        if spec.halves is not None and isinstance(gold, BondAnswer):
            return {spec.halves: float(gold.present)}
        return {}

    def _exact_here(self, gold: BondAnswer) -> bool:
        return self.paper_exact and gold.present and bool(gold.bonds)

    def score(self, spec: TaskSpec, pred, gold: BondAnswer, profile: str, strict: bool) -> dict:
        out = self._halves(spec, gold)
        n_match = None
        if not isinstance(pred, BondAnswer):
            main = {"score": 0.0, "exact": 0.0}
        elif not gold.present or not gold.bonds:
            ok = float(pred.present == gold.present and not pred.bonds)
            main = {"score": ok, "exact": ok}
        elif not pred.present:
            main = {"score": 0.0, "exact": 0.0}
        else:
            pred = align_chain_case(pred, gold)
            n_match = count_matched(pred.bonds, gold.bonds, strict=strict)
            n_pred, n_gold = len(pred.bonds), len(gold.bonds)
            exact = float(n_match == n_gold == n_pred)
            main = {"score": set_score(n_pred, n_gold, n_match), "exact": exact}
        readings = alt_bonds(pred, gold, n_match, main, paper_exact=self._exact_here(gold))
        return {**main, **out, **readings}

    def zero(self, spec: TaskSpec, gold, profile: str) -> dict:
        out = super().zero(spec, gold, profile)
        out.update(self._halves(spec, gold))
        out.update(score_precision=0.0, score_f1=0.0)
        if isinstance(gold, BondAnswer) and self._exact_here(gold):
            out[T9_PAPER_EXACT] = 0.0
        return out

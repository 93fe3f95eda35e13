"""What the two H-bond list kinds share (:mod:`.residue_bonds`, :mod:`.pocket_bonds`): the
set rule of docs/spec.md section 7, its precision/F1 readings, the task's ``halves`` metric."""

from __future__ import annotations

import random
import string
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
from .base import AnswerKind, KindExamples

#: Residues the drawn gold answers name (the H-bond formers of the twenty amino acids).
DRAWN_RESIDUES = ("ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "LYS", "MET")
DRAWN_RESIDUES += ("SER", "THR", "TRP", "TYR")


def _chars(rng: random.Random, alphabet: str, lo: int, hi: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


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

    # -- examples -----------------------------------------------------------------------------

    @property
    def _forms(self) -> tuple[str, str]:
        """The empty answer and the prefix of a non-empty one."""
        return ("No", "Yes: ") if self.named_residue else ("None", "")

    def _draw_item(self, rng: random.Random) -> str:
        up, digits = string.ascii_uppercase, string.digits
        res = rng.choice(DRAWN_RESIDUES)
        atom = rng.choice("CNOS") + _chars(rng, up, 0, 2) + _chars(rng, digits, 0, 1)
        lig = _chars(rng, up, 1, 2) + _chars(rng, digits, 0, 2) + _chars(rng, up, 0, 1)
        lig += _chars(rng, "'*", 0, 2) + (f":{rng.choice(digits)}" if rng.random() < 0.2 else "")
        if self.named_residue:
            return f"{res} {atom}, {lig}"
        number = f"{'-' if rng.random() < 0.1 else ''}{rng.choice(digits[1:])}"
        number += _chars(rng, digits, 0, 3) + _chars(rng, up, 0, 1)
        return f"{res} {number} {atom} {rng.choice(up + digits + '_')}, {lig}"

    def draw_gold(self, spec: TaskSpec, rng: random.Random) -> str:
        """The empty answer, or one to eight bonds (sorted, none twice in any case)."""
        empty, prefix = self._forms
        if rng.random() < 0.2:
            return empty
        items: dict[str, str] = {}
        for _ in range(rng.randint(1, 8)):
            item = self._draw_item(rng)
            items.setdefault(item.upper(), item)
        return prefix + "; ".join(sorted(items.values()))

    def reword(self, spec: TaskSpec, gold: str, rng: random.Random) -> str:
        """The bonds as a bullet list in another order under a sentence; the empty answer in
        words."""
        empty, prefix = self._forms
        if gold == empty:
            return rng.choice(
                ["No.", "**No**, there is no hydrogen bond.", "There are no hydrogen bonds."]
            )
        items = gold[len(prefix) :].split("; ")
        rng.shuffle(items)
        lead = "Yes, I see these bonds:\n" if prefix else "The hydrogen bonds are:\n"
        return lead + "\n".join(f"- {item}" for item in items)

    def examples(self, spec: TaskSpec) -> KindExamples:
        """Two bonds, one of them found (half the set rule's score), the empty answer, and a
        reply in a markdown table or in words."""
        empty, prefix = self._forms
        if self.named_residue:
            one, two = "ASN OD1, O1B", "ARG NH2, O3"
            table = (
                "| residue | atom | ligand atom |\n|---|---|---|\n| ASN | OD1 | O1B |",
                prefix + one,
            )
        else:
            one, two = "ASN 460 OD1 A, O1B", "ARG 766 NH2 A, O3"
            table = ("| ASN | 460 | OD1 | A | O1B |", one)
        both = prefix + "; ".join(sorted((one, two)))
        return KindExamples(
            golds=(empty, both),
            reads=(table, ("There are none." if not self.named_residue else "No bonds.", empty)),
            scores=(
                (both, both, 1.0),
                (both, prefix + one, 0.5),
                (empty, empty, 1.0),
                (empty, prefix + one, 0.0),
                (both, "I cannot tell from these pictures.", 0.0),
            ),
        )

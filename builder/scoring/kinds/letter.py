"""One option letter (T5, T6, T8): accuracy. The row carries its options (``options``: texts,
or ``image N`` for options shown as pictures) and, in its metadata (:class:`ChoiceMeta`), the
operations of each option in letter order and the ``correct`` letter."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import numpy as np

from ...core.registry import LETTER, TaskSpec
from ...core.rows import QuestionMeta
from ..replies import parse_letter
from .base import AnswerKind, KindExamples

#: How many options a letter question offers (A-D): the validator's balance check and the
#: random baseline's fallback when a record lists none.
OPTION_COUNT = 4


class Letter(AnswerKind):
    name = LETTER
    carries_options = True
    audit = ("reproduction", "uniqueness")
    blind = ("options_only", "text_only")

    def row_problems(self, row: Mapping, meta: QuestionMeta) -> list[str]:
        """The options against the metadata: one option per entry of ``option_operations``
        (:data:`OPTION_COUNT` of them, all different), the gold letter among them and equal to
        ``correct``."""
        rid, options = row.get("id"), list(row.get("options") or ())
        ops = getattr(meta, "option_operations", ())
        out = []
        if len(options) != OPTION_COUNT or len(ops) != len(options):
            out.append(
                f"{rid}: {len(options)} options and {len(ops)} option_operations "
                f"(a letter question has {OPTION_COUNT} of each)"
            )
        if len(set(ops)) != len(ops):
            out.append(f"{rid}: two options have the same option_operations")
        letter = row.get("answer")
        if letter != getattr(meta, "correct", None):
            out.append(f"{rid}: answer {letter!r} is not metadata.correct {meta.correct!r}")
        if not (
            isinstance(letter, str) and len(letter) == 1 and 0 <= ord(letter) - 65 < len(options)
        ):
            out.append(f"{rid}: answer {letter!r} names none of the {len(options)} options")
        return out

    def gold(self, spec: TaskSpec, answer: str) -> str:
        letter = answer.strip().upper()
        if len(letter) == 1 and "A" <= letter <= "Z":
            return letter
        raise ValueError("not a letter")

    def parse_section(
        self, text: str, immediate: bool, options: Sequence[str] | None, residues: frozenset
    ):
        return parse_letter(text, options, immediate)

    def score(self, spec: TaskSpec, pred, gold: str, profile: str, strict: bool) -> dict:
        ok = float(pred == gold)
        return {"score": ok, "exact": ok}

    def random_answer(self, spec: TaskSpec, record: Mapping, rng: np.random.Generator) -> str:
        """A random letter among the record's options (A-D when it lists none)."""
        options = record.get("options") if isinstance(record, Mapping) else None
        n = len(options) if options is not None and len(options) else OPTION_COUNT
        return chr(ord("A") + int(rng.integers(0, min(n, 26))))

    def draw_gold(self, spec: TaskSpec, rng: random.Random) -> str:
        return chr(ord("A") + rng.randrange(OPTION_COUNT))

    def reword(self, spec: TaskSpec, gold: str, rng: random.Random) -> str:
        return rng.choice(
            [f"The answer is ({gold.lower()})", f"**Answer:** Option {gold}", f"I pick {gold}."]
        )

    def examples(self, spec: TaskSpec) -> KindExamples:
        return KindExamples(
            golds=("A", "C"),
            reads=(("The correct option is (C).", "C"), ("Answer: b", "B")),
            scores=(("C", "C", 1.0), ("C", "The correct option is (C).", 1.0), ("C", "A", 0.0)),
        )


KIND = Letter()

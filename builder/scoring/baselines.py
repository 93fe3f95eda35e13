"""Chance-level baselines (random and constant answers) for every task."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.registry import LETTER, RESIDUE_BONDS, TASK_BY_NAME, CommandRange, canonical_task
from ..operations.language import Move, Roll, format_operations

# --------------------------------------------------------------------------------------------
# Chance baselines
# --------------------------------------------------------------------------------------------

BASELINE_KINDS = ("random", "always_no")


def _draw(draw: CommandRange, rng: np.random.Generator):
    def axis() -> str:
        return str(rng.choice(list(draw.axes))) if len(draw.axes) > 1 else draw.axes[0]

    if draw.magnitude_first:
        value = int(rng.choice(list(draw.values)))
        axis_name = axis()
    else:
        axis_name = axis()
        value = int(rng.choice(list(draw.values)))
    return Move(axis_name, value) if draw.verb == "move" else Roll(axis_name, value)


def baseline_prediction(kind: str, task: str, record: Mapping, rng: np.random.Generator) -> str:
    """A chance-level answer for one question, from the task's registry entry.

    ``random``: a random letter among the options (A-D when the record lists none) for letter
    answers; for command answers, one random command per entry of the task's ``commands`` list
    (T1 ``move x|y D``, D in -4..4, not 0; T2 ``roll x|y|z A``, A in -90..90 step 15, not 0; T3
    ``move z D``, D in 40..60; T7 ``roll AX A, move x D``, A in ±15..90 step 15, D in -30..30,
    not 0); ``Yes`` or ``No`` at random for a residue's bonds (T4; a bare ``Yes`` lists no bond); else
    the task's ``constant_answer`` (``None`` for T9).
    ``always_no``: the task's ``constant_answer`` (``No`` for T4, ``None`` for T9, ``A`` for
    choice tasks, an empty answer that scores 0 for the command tasks).
    """
    spec = TASK_BY_NAME[canonical_task(task)]
    if kind not in BASELINE_KINDS:
        raise ValueError(f"unknown baseline kind {kind!r}; expected one of {', '.join(BASELINE_KINDS)}")
    if kind == "always_no":
        return spec.constant_answer
    if spec.answer_kind == LETTER:
        options = record.get("options") if isinstance(record, Mapping) else None
        n = len(options) if options is not None and len(options) else 4
        return chr(ord("A") + int(rng.integers(0, min(n, 26))))
    if spec.commands:
        return format_operations(tuple(_draw(draw, rng) for draw in spec.commands))
    if spec.answer_kind == RESIDUE_BONDS:
        return "Yes" if rng.random() < 0.5 else "No"
    return spec.constant_answer

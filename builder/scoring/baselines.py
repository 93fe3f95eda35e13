"""Chance-level baselines (random and constant answers) for every task; the blind baselines
(options only, text only) are in :mod:`.blind` and listed here in :data:`BLIND_BASELINES`."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.registry import TASK_BY_NAME, canonical_task
from .blind import BEST_RULE, BLIND_NAMES, IMAGE_RULE, OPTION_RULES, TEXT_ONLY
from .kinds import kind_of

#: Baselines that never look at the pictures (:mod:`.blind`): the options-only rules, their best,
#: the image rule of T5/T6 (computed by ``builder.checks.blind``) and the text-only answer.
BLIND_BASELINES = (*OPTION_RULES, IMAGE_RULE, BEST_RULE, TEXT_ONLY)

# --------------------------------------------------------------------------------------------
# Chance baselines
# --------------------------------------------------------------------------------------------

BASELINE_KINDS = ("random", "always_no")


def baseline_prediction(kind: str, task: str, record: Mapping, rng: np.random.Generator) -> str:
    """A chance-level answer for one question, from the task's registry entry and its answer
    kind (:mod:`.kinds`).

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
        raise ValueError(
            f"unknown baseline kind {kind!r}; expected one of {', '.join(BASELINE_KINDS)}"
        )
    if kind == "always_no":
        return kind_of(spec).constant_answer(spec)
    return kind_of(spec).random_answer(spec, record, rng)


#: Display names of every baseline, chance first (card, ``misi-bench score``).
BASELINE_NAMES = {
    "random": "random answer in range / random letter",
    "always_no": "constant (`No`, `None`, `A`)",
    **BLIND_NAMES,
}

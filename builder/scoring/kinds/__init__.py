"""The answer kinds: one object per kind of answer (docs/architecture.md, docs/extending.md).

A task's registry entry names its kind (``TaskSpec.answer_kind``); :func:`kind_of` gives the
object that parses a reply, reads the gold, scores and gives the other readings, draws the
chance baselines, names the metadata type, checks the options a row carries and says which
audit checks apply. Shared code asks it and never compares kind names. One module per kind; a
new kind is a module here (a subclass of :class:`.base.AnswerKind`), one line in :data:`KINDS`
and its tests.
"""

from __future__ import annotations

from ...core.registry import TASK_BY_NAME, TaskSpec, canonical_task
from .base import AnswerKind
from .letter import Letter
from .operation_pair import OperationPair
from .pocket_bonds import PocketBonds
from .residue_bonds import ResidueBonds
from .single_operation import SingleOperation

#: Every answer kind by its registry name.
KINDS: dict[str, AnswerKind] = {
    k.name: k for k in (SingleOperation(), OperationPair(), Letter(), ResidueBonds(), PocketBonds())
}


def kind_of(task: str | TaskSpec) -> AnswerKind:
    """The answer kind of a task (a config name, an alias or its registry entry)."""
    spec = task if isinstance(task, TaskSpec) else TASK_BY_NAME[canonical_task(task)]
    try:
        return KINDS[spec.answer_kind]
    except KeyError:
        raise ValueError(
            f"task {spec.name}: answer kind {spec.answer_kind!r} is not one of {', '.join(KINDS)}"
        ) from None


__all__ = ["KINDS", "AnswerKind", "kind_of"]

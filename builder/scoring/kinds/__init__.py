"""The answer kinds: one object per kind of answer (docs/architecture.md, docs/extending.md).

A task's registry entry names its kind (``TaskSpec.answer_kind``); :func:`kind_of` gives the
object that parses a reply, reads the gold, scores and gives the other readings, draws the
chance baselines, names the metadata type, checks the options a row carries, says which audit
checks apply, and gives the answer format and the human app's form (from whether it carries
options). Shared code asks it and never compares kind names. One module per kind,
``builder/scoring/kinds/<kind>.py``, ending with ``KIND = <its AnswerKind subclass>()``: the
modules are found by the names the registry's tasks give (``registry.ANSWER_KINDS``), as the
rooms are by the tasks' names, so a new kind is its module (with its examples, the data the
shared tests iterate) and a task that names it; there is no list to edit.
"""

from __future__ import annotations

import importlib

from ...core.registry import ANSWER_KINDS, TASK_BY_NAME, TaskSpec, canonical_task
from .base import AnswerKind, KindExamples


def _kind(name: str) -> AnswerKind:
    """The ``KIND`` of ``builder/scoring/kinds/<name>.py`` (a kind a task names without a
    module fails here, at import, naming it)."""
    try:
        kind = importlib.import_module(f".{name}", __package__).KIND
    except ModuleNotFoundError as exc:
        raise ImportError(
            f"answer kind {name!r}: no module builder/scoring/kinds/{name}.py ({exc})"
        ) from None
    if kind.name != name:
        raise ImportError(f"builder/scoring/kinds/{name}.py: its KIND is {kind.name!r}")
    return kind


#: Every answer kind the registry's tasks name, by name, in the registry's order.
KINDS: dict[str, AnswerKind] = {name: _kind(name) for name in ANSWER_KINDS}


def kind_of(task: str | TaskSpec) -> AnswerKind:
    """The answer kind of a task (a config name, an alias or its registry entry)."""
    spec = task if isinstance(task, TaskSpec) else TASK_BY_NAME[canonical_task(task)]
    try:
        return KINDS[spec.answer_kind]
    except KeyError:
        raise ValueError(
            f"task {spec.name}: answer kind {spec.answer_kind!r} is not one of {', '.join(KINDS)}"
        ) from None


def answer_format(task: str | TaskSpec) -> str:
    """``fill_in`` or ``multiple_choice``: the ``answer_format`` column of a task's rows."""
    return kind_of(task).answer_format


__all__ = ["KINDS", "AnswerKind", "KindExamples", "answer_format", "kind_of"]

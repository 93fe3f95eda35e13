"""What the shared tests expect of a task, derived from its registry entry
(``builder/core/registry.py``) and its answer kind (``builder/scoring/kinds/``: the kind draws
gold answers, rewords them and gives its examples) or read from its data file's ``expect``
section (``builder/tasks/<name>.yaml``), never from its name or its kind's name: a new task is
covered by adding its entry and data file, a new kind by its module (issues 34 and 50)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import strategies as st
from misi_bench.builder.core.registry import TASK_BY_NAME, TaskSpec
from misi_bench.builder.scoring.kinds import AnswerKind, kind_of
from misi_bench.builder.tasks.data import task_data


def spec(task: str) -> TaskSpec:
    return TASK_BY_NAME[task]


def kind(task: str) -> AnswerKind:
    """The answer kind of ``task`` (its examples are the data the kind-level tests iterate)."""
    return kind_of(spec(task))


def expect(task: str) -> Mapping:
    """The ``expect`` section of the task's data file."""
    return task_data(task).expect


def command_problems(task: str, ops: Sequence) -> list[str]:
    """Why ``ops`` (parsed commands) is not an answer of ``task``'s registry ``commands``: the
    number of commands, each command's verb, axis and value (empty when it is one)."""
    commands = spec(task).commands
    if len(ops) != len(commands):
        return [f"{len(ops)} commands, expected {len(commands)}"]
    return [
        f"{op} is not {cr.verb} {'|'.join(cr.axes)} in {min(cr.values)}..{max(cr.values)}"
        for op, cr in zip(ops, commands)
        if op.verb != cr.verb or op.axis not in cr.axes or op.magnitude not in cr.values
    ]


def gold_answers(task: str) -> st.SearchStrategy:
    """Gold answers of ``task``, drawn by its answer kind (``AnswerKind.draw_gold``: from the
    registry entry's commands, a letter, a bond list in the kind's form, ...)."""
    return st.randoms(use_true_random=False).map(lambda rng: kind(task).draw_gold(spec(task), rng))


def canonical_text(task: str, gold: str) -> str:
    """The gold answer as the kind writes its strict reading back (bonds sorted, ...)."""
    return kind(task).format(kind(task).gold(spec(task), gold))

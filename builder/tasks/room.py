"""A task's room: the hooks shared machinery reaches a task through (docs/spec.md section 5).

Every task module ``builder/tasks/<name>.py`` ends with ``ROOM = Room(...)``: its registry entry
(:class:`~..core.registry.TaskSpec`, pure data: answer kind, labels, baselines) plus the code only
that task has: the generator, the audit's replay of a stored question's images, the audit's
answer space (uniqueness) or needed labels (legibility), and the validator's check that re-derives
the stored answer; and the checks it takes beyond its answer kind's defaults, or declines with a
reason (``builder.checks.declared``). ``builder.tasks.ROOMS`` lists the rooms; the dataset layer dispatches on them
and never on a task's name. This module also holds the helpers the hooks share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.errors import TaskError
from ..core.records import Complex
from ..core.registry import TaskSpec
from ..core.rows import QuestionMeta
from ..operations.language import Operation, parse_operations
from .base import Annotation, ImageSpec, TaskContext, TaskInstance

#: Loads the annotation of a complex by PDB id (the audit's cache).
Loader = Callable[[str], Annotation]


@dataclass(frozen=True)
class AnswerSpace:
    """The gold candidate, the others, and the index of the stored image that pictures the gold
    answer (None when no stored image does: T7, T8). A candidate is an ``ImageSpec`` named by
    its answer text: the answer, whose complex, and the request that pictures it."""

    gold: ImageSpec
    others: tuple[ImageSpec, ...]
    stored_index: int | None


@dataclass(frozen=True, eq=False)
class CheckSubject:
    """What a validator check gets of one stored row's complex, read afresh from its source:
    the complex, its H-bonds, its front-view coordinates (``screen``, Å, origin = box centre)
    and the model's pivot (box centre of ``screen``)."""

    complex: Complex
    hbonds: tuple
    screen: np.ndarray
    pivot: np.ndarray


@dataclass(frozen=True)
class Declined:
    """A check the task's answer kind proposes that the room declines, and why (printed as
    "<check>: not applicable (<reason>)" in the build's manifest, summary and card)."""

    check: str
    reason: str


@dataclass(frozen=True)
class Room:
    """One task's hooks. ``generate(ctx)`` makes its questions; ``replay(row, meta, ann, load)``
    rebuilds a stored row's image plan from its metadata and gold answer; ``check(row, meta,
    subject)`` returns the validator's problems with the row's answer (empty when it holds);
    ``answer_space(row, meta, images, ann, load)`` lists the candidates the uniqueness audit
    renders (None when the task has no finite answer space); ``needed_labels(row, meta, ann)``
    the label keys the legibility audit looks for (H-bond answers); ``hbond_scope(row, meta,
    bonds)`` the bonds among ``bonds`` (``HBond.pocket_text()`` strings) that the question's answer
    is about (the rotamers audit; H-bond tasks only); ``balanced_axes`` asks the validator to check
    that the axis of the first operation is drawn evenly; ``metadata_fields`` names the metadata
    fields the room writes beyond its answer kind's metadata type (kept in ``meta.extra``, read
    only by this room; the build refuses any other undeclared field). ``checks`` names the
    checks the room takes beyond its answer kind's defaults (``AnswerKind.audit``; T8 adds
    legibility and rotamers: its question names an H-bond), ``declines`` those defaults it does
    not take, each with its reason (a letter task whose options are numbers declines uniqueness:
    its options are not pictures); a check needs its hook either way
    (``builder.checks.declared``). ``meta`` is the row's
    metadata typed by its answer kind (``builder.core.rows``: ``OperationMeta``, ``ChoiceMeta``,
    ``BondsMeta``)."""

    spec: TaskSpec
    generate: Callable[[TaskContext], list[TaskInstance]]
    replay: Callable[[Mapping, QuestionMeta, Annotation, Loader], tuple[ImageSpec, ...]]
    check: Callable[[Mapping, QuestionMeta, CheckSubject], list[str]]
    answer_space: Callable[..., AnswerSpace] | None = None
    needed_labels: Callable[[Mapping, QuestionMeta, Annotation], set] | None = None
    hbond_scope: Callable[[Mapping, QuestionMeta, set], set] | None = None
    balanced_axes: bool = False
    metadata_fields: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    declines: tuple[Declined, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name


def ops_of(texts: Sequence[str]) -> tuple[Operation, ...]:
    """The operations of a list of command texts."""
    return tuple(op for text in texts for op in parse_operations(text))


def gold_ops(spec: TaskSpec, row: Mapping, meta: QuestionMeta) -> tuple[Operation, ...]:
    """The gold operation sequence: the answer itself, or the option the gold letter names (the
    row's metadata type says which: ``gold_commands``)."""
    return ops_of(meta.gold_commands(row["answer"]))


def magnitudes(spec: Mapping) -> list[int]:
    """The non-zero values of a ``{min, max, step}`` range of a task's ``params`` (its data file)."""
    step = int(spec.get("step", 1))
    return [v for v in range(int(spec["min"]), int(spec["max"]) + 1, step) if v != 0]


def signed(spec: Mapping) -> list[int]:
    """The values of a magnitude range with both signs."""
    mags = magnitudes(spec)
    return sorted(set(mags) | {-m for m in mags if m > 0})


def split_space(cands: list[ImageSpec], gold: str, stored_index: int | None) -> AnswerSpace:
    """The :class:`AnswerSpace` of candidates named by answer text, ``gold`` among them."""
    golds = [c for c in cands if c.view_name == gold]
    if len(golds) != 1:
        raise TaskError(f"gold answer {gold!r} is not in the task's answer space")
    return AnswerSpace(golds[0], tuple(c for c in cands if c.view_name != gold), stored_index)

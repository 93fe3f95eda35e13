"""The checks of a built folder as declared objects: one :class:`Check` per check.

A check says what it reads (``needs``: ``rows``, ``structures``, ``pictures``, ``train split``),
the room hook it runs through (``hook``; None: shared code only), which stage runs it
(``stage``: the validation re-reads every row, the audit a sample of questions, the gate the
blind baselines) and whether it applies to a task (:meth:`Check.applies_to`, with the reason
when it does not). Which checks a task takes is declared in one place, :func:`declared`: its
answer kind proposes the defaults (``AnswerKind.audit``, ``carries_options``, ``blind``), the
room adds its own (``Room.checks``; ``Room.balanced_axes``) and declines any default with a
reason (``Room.declines``). A declared check whose hook the room lacks is not applicable, and
says so; nothing is faked to make a check run, and nothing that did not run is counted as
passed.

How a check runs on a row belongs to its stage: ``audit.ROW_CHECKS`` (one function per audit
check), ``validate`` (the answer check per row, the balance checks over a task's rows),
``blind.options_only_gate`` (over the blind baselines); the build
records one :func:`status` per task and check in its manifest (``manifest["checks"]``), its
summary and its card: ``ran``, ``failed``, ``not applicable (why)`` or ``not run (why)`` (the
stage was switched off, or had no question to look at).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core.registry import TASK_NAMES
from ..scoring.kinds import kind_of
from ..tasks import room_of
from ..tasks.room import Room

RAN, FAILED = "ran", "failed"
#: The stages that run checks, in the order a build runs them, and what a build that ran
#: none of a stage says of its checks.
STAGES = {
    "validation": "the build ran no validation",
    "audit": "the build ran no audit",
    "gate": "the build ran no audit, so no options-only gate",
}


@dataclass(frozen=True)
class Applicability:
    """Whether a check applies to a task; ``reason`` says why not (empty when it applies)."""

    applies: bool
    reason: str = ""


@dataclass(frozen=True)
class Check:
    """One check: its name, stage, what it reads, the room hook it needs, what it asks, and the
    reason given to a task that does not take it (``undeclared``)."""

    name: str
    stage: str
    needs: tuple[str, ...]
    about: str
    undeclared: str
    hook: str | None = None

    def applies_to(self, task: str, room: Room | None = None) -> Applicability:
        """Whether the check runs on ``task``'s questions, with the reason when it does not:
        the room declines it, the task does not declare it, or the room lacks its hook
        (``room``: this room instead of the task's own)."""
        room = room or room_of(task)
        for declined in room.declines:
            if declined.check == self.name:
                return Applicability(False, declined.reason)
        if self.name not in declared(task, room):
            return Applicability(False, self.undeclared)
        if self.hook is not None and getattr(room, self.hook) is None:
            return Applicability(False, f"the room gives no {self.hook} hook")
        return Applicability(True)


#: Every check, in the order a build runs and reports them.
CHECKS: tuple[Check, ...] = (
    Check(
        "answers",
        "validation",
        ("rows", "structures"),
        "every row's schema, pictures and options hold, and its answer is derived again from "
        "the structure read afresh (the room's check) and scores 1",
        "every task takes it",
        hook="check",
    ),
    Check(
        "letter_balance",
        "validation",
        ("rows",),
        "the gold letters are drawn evenly",
        "the answer is not a letter",
    ),
    Check(
        "axis_balance",
        "validation",
        ("rows",),
        "the axis of the first gold operation is drawn evenly",
        "the room draws no axis evenly",
    ),
    Check(
        "reproduction",
        "audit",
        ("rows", "structures", "pictures"),
        "every stored picture renders again pixel for pixel from the row's metadata",
        "the answer kind calls for no re-rendering",
        hook="replay",
    ),
    Check(
        "uniqueness",
        "audit",
        ("rows", "structures", "pictures"),
        "every other candidate answer looks different from the gold one",
        "the answer is not one picture among candidates",
        hook="answer_space",
    ),
    Check(
        "legibility",
        "audit",
        ("rows", "structures", "pictures"),
        "the labels an answer names are legible in at least one view",
        "the answer names no label",
        hook="needed_labels",
    ),
    Check(
        "rotamers",
        "audit",
        ("rows", "structures"),
        "the share of H-bond answers that depend on a modelled rotatable hydrogen",
        "the answer is not about H-bonds",
        hook="hbond_scope",
    ),
    Check(
        "options_only",
        "gate",
        ("rows", "train split"),
        "no rule reading only the options beats chance (balanced decoys)",
        "the answer is not a letter among options",
    ),
)
CHECK_BY_NAME: dict[str, Check] = {c.name: c for c in CHECKS}
#: The audit's checks, by name (``misi-bench audit --checks``).
AUDIT_CHECKS = tuple(c.name for c in CHECKS if c.stage == "audit")


def declared(task: str, room: Room | None = None) -> tuple[str, ...]:
    """The checks ``task`` declares: every task's answer check, its answer kind's defaults, the
    room's own (``Room.checks``, ``Room.balanced_axes``), minus those the room declines
    (``room``: this room instead of the task's own)."""
    kind, room = kind_of(task), room or room_of(task)
    names = ["answers", *kind.audit, *room.checks]
    if kind.carries_options:
        names.append("letter_balance")
    if room.balanced_axes:
        names.append("axis_balance")
    if "options_only" in kind.blind:
        names.append("options_only")
    declined = {d.check for d in room.declines}
    return tuple(c.name for c in CHECKS if c.name in names and c.name not in declined)


def applying(tasks: Iterable[str], check: str) -> tuple[str, ...]:
    """The tasks among ``tasks`` that ``check`` applies to."""
    found = CHECK_BY_NAME[check]
    return tuple(t for t in tasks if t in TASK_NAMES and found.applies_to(t).applies)


def not_applicable(reason: str) -> str:
    return f"not applicable ({reason})"


def not_run(reason: str) -> str:
    return f"not run ({reason})"


def status(task: str, check: str, outcomes: Mapping[tuple[str, str], str]) -> str:
    """One task's status for one check: not applicable (why) when it does not apply, else what
    its stage recorded in ``outcomes`` (``(task, check) -> ran | failed | not run (why)``),
    else not run (its stage did not run)."""
    found = CHECK_BY_NAME[check].applies_to(task)
    if not found.applies:
        return not_applicable(found.reason)
    return outcomes.get((task, check), not_run(STAGES[CHECK_BY_NAME[check].stage]))


def statuses(tasks: Iterable[str], outcomes: Mapping[tuple[str, str], str]) -> dict:
    """``{task: {check: status}}`` for every check, in :data:`CHECKS` order (the manifest's
    ``checks`` block)."""
    return {t: {c.name: status(t, c.name, outcomes) for c in CHECKS} for t in tasks}


def status_lines(checks: Mapping[str, Mapping[str, str]], quote: str = "") -> list[str]:
    """One line per task of a manifest's ``checks`` block, ``<task>: <check>: <status>; ...``,
    tasks in registry order and checks in :data:`CHECKS` order whatever the block's key order
    (a manifest read back has sorted keys); ``quote`` goes around the task's name (the card:
    a backtick)."""
    order = {t: k for k, t in enumerate(TASK_NAMES)}
    return [
        f"{quote}{task}{quote}: "
        + "; ".join(f"{c.name}: {checks[task][c.name]}" for c in CHECKS if c.name in checks[task])
        for task in sorted(checks, key=lambda t: (order.get(t, len(order)), t))
    ]


def uniqueness_words(checks: Mapping[str, Mapping[str, str]]) -> str:
    """What the build's summary may say of uniqueness: "all unique" only when the check ran on
    every task, "unique where checked (tasks)" when it ran on some, nothing when it ran on
    none (a build of tasks without the check never reads "all unique")."""
    ran = [t for t, found in checks.items() if found.get("uniqueness") == RAN]
    if not ran:
        return ""
    if len(ran) == len(checks):
        return ", all unique"
    return f", unique where checked ({', '.join(ran)})"

"""The card's task parts, written from the task registry (``core.registry``) and each task's
data file (its ``card`` section, ``tasks.data.TaskCard``): the task table, the opening
sentence's list of what the tasks ask, the scoring rules with their other readings, the three
averages, and the task-dependent Limitations bullets. A build of another task set gets a card
that names its own tasks and no other; a task's words live in its own data file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.registry import HEADLINE_EXCLUDED, TASK_BY_NAME, TASK_SPECS, TaskSpec
from ..scoring.kinds import kind_of
from ..tasks import room_of
from ..tasks.base import LETTERS
from ..tasks.data import TaskCard, task_data

_NUMBER_WORDS = (
    "no",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)


def number_word(n: int) -> str:
    """``eight`` for 8 (digits above twelve)."""
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def _label(spec: TaskSpec) -> str:
    return f"T{spec.number}"


def task_card(task: str) -> TaskCard:
    """The card words of ``task`` (its data file's ``card`` section)."""
    return task_data(task).card


def _words(spec: TaskSpec, text: str) -> str:
    """``text`` with ``{task}`` and the scoring placeholders filled from the registry entry."""
    fields = {"task": _label(spec)}
    if spec.commands:
        steps = len(spec.commands[0].values) - 1
        fields.update(steps=steps, steps_less=steps - 1)
    if spec.score_radius is not None:
        fields["radius"] = f"{spec.score_radius:g}"
    return text.format(**fields)


def _specs(tasks: Iterable[str]) -> list[TaskSpec]:
    return [TASK_BY_NAME[t] for t in tasks if t in TASK_BY_NAME]


def join_labels(labels: Sequence[str], last: str = "and") -> str:
    """``T1``, ``T1 and T2``, ``T1, T2 and T3``."""
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} {last} {labels[-1]}"


def answer_format_text(spec: TaskSpec) -> str:
    """The task table's format cell: ``fill-in`` or ``choice A-D``."""
    return f"choice {LETTERS[0]}-{LETTERS[-1]}" if kind_of(spec).carries_options else "fill-in"


def task_table(tasks: Sequence[str]) -> str:
    """The Tasks table: one row per task of the build, in the given order."""
    lines = ["| config | task | format | answer |", "|---|---|---|---|"]
    for spec in _specs(tasks):
        words = task_card(spec.name)
        lines.append(
            f"| `{spec.name}` | {_label(spec)}: {_words(spec, words.summary)} | "
            f"{answer_format_text(spec)} | {words.answer} |"
        )
    return "\n".join(lines)


def _once(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
    return out


def asks_text(tasks: Sequence[str]) -> str:
    """What the build's questions ask, for the opening sentence (each phrase once, in task
    order, joined by commas)."""
    return ", ".join(_once(_words(s, task_card(s.name).asks) for s in _specs(tasks)))


def scoring_text(tasks: Sequence[str]) -> str:
    """The rule of each task of the build, tasks with the same rule named together at the first
    of them (``T5/T6/T8 accuracy``), in task order."""
    groups: dict[str, list[str]] = {}
    for spec in _specs(tasks):
        groups.setdefault(_words(spec, task_card(spec.name).scoring), []).append(_label(spec))
    return "; ".join(f"{'/'.join(labels)} {rule}" for rule, labels in groups.items())


def options_only_text(tasks: Sequence[str]) -> str:
    """What the options-only rules read, per choice task of the build (tasks with the same
    rules named together, ``T5/T6: ...``); '' when the build has none."""
    groups: dict[str, list[str]] = {}
    for spec in _specs(tasks):
        rule = task_card(spec.name).options_only
        if rule:
            groups.setdefault(_words(spec, rule), []).append(_label(spec))
    return "; ".join(f"{'/'.join(labels)}: {rule}" for rule, labels in groups.items())


def readings_text(tasks: Sequence[str]) -> str:
    """The other readings ``misi-bench score`` reports for the build's tasks ('' for none)."""
    return "; ".join(_once(_words(s, r) for s in _specs(tasks) for r in task_card(s.name).readings))


def averages_text() -> str:
    """The three averages and what each is, from the registry's headline membership and halves
    (the averages are defined over the registry's tasks, whatever a build holds)."""
    columns: list[str] = []
    for spec in TASK_SPECS:
        if spec.in_headline:
            if spec.halves is not None:
                columns += [f"{_label(spec)} positive", f"{_label(spec)} negative"]
            else:
                columns.append(_label(spec))
    left_out = [_label(TASK_BY_NAME[t]) for t in HEADLINE_EXCLUDED]
    halves = [_label(s) for s in TASK_SPECS if s.halves is not None and s.in_headline]
    rules = []
    if left_out:
        verb = "is" if len(left_out) == 1 else "are"
        rules.append(f"{join_labels(left_out)} {verb} left out")
    if halves:
        rules.append(
            f"{join_labels(halves)} {'counts' if len(halves) == 1 else 'count'} as its two halves"
        )
    without = f", without {join_labels(left_out)}" if left_out else ""
    once = f" ({join_labels(halves)} once)" if halves else ""
    return (
        "Three averages are reported, each under its own name: `paper_average`, the paper's "
        f"Table 1 average (the mean of {number_word(len(columns))} columns: {', '.join(columns)}"
        + (f"; {' and '.join(rules)}" if rules else "")
        + "); `average_all_tasks`, the macro mean of the scores of all tasks; "
        f"`average_headline_tasks`, the same over the headline's tasks{without}{once}."
    )


def scoring_paragraph(tasks: Sequence[str]) -> str:
    """The card's scoring paragraph: each task's rule, the other readings reported beside the
    headline, the blind-floor margins."""
    readings = readings_text(tasks)
    other = (
        f" Where the paper's text allows another reading ({readings}), `misi-bench score` "
        "reports it beside the headline (docs/fidelity.md), and it prints"
        if readings
        else " `misi-bench score` prints"
    )
    return (
        f"Scoring (one scorer for every harness): {scoring_text(tasks)}.{other} every result's "
        "margin above the build's blind floor with a 95% interval (docs/decoys.md)."
    )


def hbond_tasks(tasks: Sequence[str]) -> list[str]:
    """Labels of the build's tasks whose answers the H-bond detector decides (their rooms say
    which bonds a question is about: ``Room.hbond_scope``)."""
    return [_label(s) for s in _specs(tasks) if room_of(s.name).hbond_scope is not None]


def underdetermined_bullets(tasks: Sequence[str], profile: str) -> list[str]:
    """The Limitations bullet of each task of the build that ``profile``'s prompt leaves
    underdetermined (registry ``underdetermined_in``), with the reason from its data file."""
    return [
        f"- **{_label(s)} is underdetermined in the `{profile}` profile**: "
        f"{_words(s, task_card(s.name).underdetermined)}."
        for s in _specs(tasks)
        if profile in s.underdetermined_in
    ]


def answer_labels_text(tasks: Iterable[str]) -> str:
    """What the answer-bearing labels are, for the tasks of the legibility table (in task
    number order)."""
    specs = sorted(_specs(tasks), key=lambda s: s.number)
    return ", ".join(_once(_words(s, task_card(s.name).answer_labels) for s in specs))

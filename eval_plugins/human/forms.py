"""The answer-form check of the human app: is what a person typed an answer of the task's form?

The registry's :class:`~misi_bench.builder.core.registry.TaskSpec` says what an answer of each
task looks like: the commands of an operation answer (verb and axes, e.g. T1 ``move x D`` or
``move y D``; T7 one ``roll`` and one ``move x``), an option letter for the choice tasks, a
bond list the scorer's parser reads for T4 and T9. :func:`form_problem` checks the form only:
it reads nothing about the gold answer and never says whether an answer is right. An empty
answer ("I don't know") is always accepted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...builder.core.registry import CHOICE_FORM, TASK_BY_NAME
from ...builder.scoring import format_parsed, parse_prediction
from ...builder.scoring.kinds import kind_of

#: One command as :func:`format_parsed` writes it (``move x -3``, ``roll z 45``).
_COMMAND_RE = re.compile(r"^(move|roll) ([xyz]) (-?\d+)$")


def _expected(task: str) -> str:
    spec = TASK_BY_NAME[task]
    return spec.form_hint or "an answer of the task's form"


def _commands(formatted: str) -> list[tuple[str, str]]:
    """(verb, axis) of each command of a formatted operation answer."""
    out = []
    for part in formatted.split(","):
        m = _COMMAND_RE.match(part.strip())
        if m:
            out.append((m[1], m[2]))
    return out


def form_problem(task: str, text: str, options: Sequence[str] = ()) -> str | None:
    """Why ``text`` is not an answer of ``task``'s form (a sentence for the page), or None when it
    is one (or is empty: "I don't know")."""
    spec = TASK_BY_NAME[task]
    text = str(text or "")
    if not text.strip():
        return None
    if kind_of(spec).form == CHOICE_FORM:
        letters = [chr(65 + k) for k in range(len(options) or 4)]
        if text.strip().upper() not in letters:
            return f"choose one of the options {', '.join(letters)}"
        return None
    parsed = parse_prediction(task, text, options=list(options) or None)
    shown = format_parsed(task, parsed)
    if shown is None:
        return f"the scorer cannot read this as a {spec.label} answer; expected {_expected(task)}"
    if not spec.commands:
        return None
    given = _commands(shown)
    wanted = {c.verb: c for c in spec.commands}
    for verb, axis in given:
        rule = wanted.get(verb)
        if rule is None:
            return (
                f"'{shown}' is not a {spec.label} answer: it has a {verb} command; "
                f"expected {_expected(task)}"
            )
        if axis not in rule.axes:
            axes = " or ".join(rule.axes)
            return (
                f"'{shown}': a {spec.label} answer can {verb} only along {axes}, not {axis}; "
                f"expected {_expected(task)}"
            )
    verbs = sorted(v for v, _ in given)
    if verbs != sorted(c.verb for c in spec.commands):
        n = len(spec.commands)
        return (
            f"'{shown}': a {spec.label} answer has {n} command{'s' if n > 1 else ''} "
            f"({', '.join(c.verb for c in spec.commands)}); expected {_expected(task)}"
        )
    return None

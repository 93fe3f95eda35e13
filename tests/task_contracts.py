"""The contracts a task must meet (docs/extending.md "The contracts"), each a named check.

:func:`breaches` walks one task's registry entry, room, data file and the questions it makes
for its data file's sample complex, and returns ``(contract, detail)`` for every contract it
breaks; ``tests/test_task_contracts.py`` runs it over the registry, so a new task's author is
told which contract broke, by name. Every name of :data:`CONTRACTS` is a heading of the doc's
list (``tests/test_task_contracts.py`` checks both ways).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields

from misi_bench.builder import scoring
from misi_bench.builder.checks.declared import CHECK_BY_NAME, declared
from misi_bench.builder.checks.declared import CHECKS as DECLARED_CHECKS
from misi_bench.builder.core import registry
from misi_bench.builder.core.profiles import PROFILE_NAMES
from misi_bench.builder.core.rows import ChoiceMeta, RowError, metadata_from_dict
from misi_bench.builder.scoring.kinds import KINDS

#: contract name -> what it asks (the doc's list says the same, in more words).
CONTRACTS: dict[str, str] = {
    "registry-entry": "a known answer kind; answer format, human form and commands or constant "
    "answer as the kind needs; a unique name and a number after the tasks before it",
    "room": "builder/tasks/<name>.py ends with ROOM = Room(<its registry entry>, generate, "
    "replay, check, ...), generate defined in that module",
    "audit-hooks": "the room gives the hook of every check it declares (its answer kind's "
    "defaults and its own, less those it declines with a reason: uniqueness: answer_space; "
    "legibility: needed_labels; rotamers: hbond_scope) and no hook for a check it does not take",
    "data-file": "both profiles, and an expect section with sample, questions_per_complex, "
    "needs_hbond, gold, explicit_mentions and paper_mentions",
    "letter-metadata": "a letter question's metadata carries operations, one option_operations "
    "entry per option (four, all different) and correct, the gold letter",
    "metadata-fields": "every metadata field is declared by the kind's metadata type or listed in "
    "the room's metadata_fields",
    "paper-prompt-legend": "every paper-profile prompt names the pocket carbon colours (#BF99F2, "
    "#F2B366) and the element colours, as every prompt of the paper does, pocket shown or not",
    "gold-scores-one": "the gold answer of every question scores exactly 1",
    "deterministic": "the same complex, split, seed and profile give the same questions",
}

#: What every paper prompt names (the paper's drawing legend, its Appendix C).
PAPER_LEGEND = ("#BF99F2", "#F2B366", "oxygen atoms are red")
EXPECT_KEYS = (
    "sample",
    "questions_per_complex",
    "needs_hbond",
    "gold",
    "explicit_mentions",
    "paper_mentions",
)


@dataclass(frozen=True)
class Subject:
    """What the contracts look at: the entry, the ones before it, its room, its data file and
    its questions per profile (``made``; ``again``: the explicit profile's made a second time)."""

    spec: registry.TaskSpec
    before: Sequence[registry.TaskSpec]
    room: object
    data: object
    made: Mapping[str, Sequence]
    again: Sequence


def _registry_entry(s: Subject) -> list[str]:
    spec, out = s.spec, []
    kind = KINDS.get(spec.answer_kind)
    if kind is None:
        return [f"answer_kind {spec.answer_kind!r} is none of {', '.join(KINDS)}"]
    # the answer format and the human app's form follow from the kind (options or not)
    if not kind.carries_options and not spec.form_hint:
        out.append("a text answer needs a form_hint")
    if kind.needs_commands != bool(spec.commands) or (
        not spec.commands and not spec.constant_answer
    ):
        out.append(
            f"the {kind.name} kind needs {'commands' if kind.needs_commands else 'a constant_answer'}"
        )
    if any(b.name == spec.name for b in s.before):
        out.append(f"name {spec.name} is taken")
    if s.before and spec.number <= max(b.number for b in s.before):
        out.append(f"number {spec.number} is not after the last task's ({s.before[-1].number})")
    return out


def _room(s: Subject) -> list[str]:
    room = s.room
    if room is None:
        return [f"builder/tasks/{s.spec.name}.py has no ROOM"]
    if room.spec is not s.spec:
        return ["ROOM's spec is not the task's registry entry"]
    if not room.generate.__module__.endswith(f"builder.tasks.{s.spec.name}"):
        return [f"generate comes from {room.generate.__module__}, not the task's own module"]
    return [] if callable(room.replay) and callable(room.check) else ["replay or check missing"]


def _audit_hooks(s: Subject) -> list[str]:
    kind = KINDS.get(s.spec.answer_kind)
    if s.room is None or kind is None:
        return []
    mine = declared(s.spec.name, s.room)
    out = [
        f"the task declares the {check} check, which needs the room's {CHECK_BY_NAME[check].hook}"
        for check in mine
        if CHECK_BY_NAME[check].hook and getattr(s.room, CHECK_BY_NAME[check].hook) is None
    ]
    return out + [
        f"the room gives {c.hook} but does not take the {c.name} check (a hollow hook)"
        for c in DECLARED_CHECKS
        if c.hook and c.name not in mine and getattr(s.room, c.hook) is not None
    ]


def _data_file(s: Subject) -> list[str]:
    out = [f"no {p} profile" for p in PROFILE_NAMES if p not in s.data.profiles]
    return out + [f"expect.{k} missing" for k in EXPECT_KEYS if k not in s.data.expect]


def _questions(s: Subject):
    return [inst for items in s.made.values() for inst in items]


def _letter_metadata(s: Subject) -> list[str]:
    kind = KINDS.get(s.spec.answer_kind)
    if kind is None or not kind.carries_options:
        return []
    out = []
    for inst in _questions(s):
        try:
            meta = metadata_from_dict(inst.metadata, s.spec.name)
        except RowError as exc:
            out.append(f"{inst.qid}: {exc}")
            continue
        if not isinstance(meta, ChoiceMeta):
            out.append(f"{inst.qid}: metadata is {type(meta).__name__}, not ChoiceMeta")
            continue
        row = {"id": inst.qid, "options": list(inst.options), "answer": inst.answer}
        out += kind.row_problems(row, meta)
    return out


def _metadata_fields(s: Subject) -> list[str]:
    kind = KINDS.get(s.spec.answer_kind)
    if kind is None:
        return []
    declared = {f.name for f in fields(kind.metadata)} | set(getattr(s.room, "metadata_fields", ()))
    return [
        f"{inst.qid}: metadata.{name} is declared by neither {kind.metadata.__name__} nor the "
        "room's metadata_fields"
        for inst in _questions(s)
        for name in sorted(set(inst.metadata) - declared)
    ]


def _paper_legend(s: Subject) -> list[str]:
    return [
        f"{inst.qid}: the paper prompt does not name {text!r}"
        for inst in s.made.get("paper", ())[:1]
        for text in PAPER_LEGEND
        if text not in " ".join(inst.question.split())
    ]


def _gold_scores_one(s: Subject) -> list[str]:
    out = []
    for inst in _questions(s):
        try:
            got = scoring.score_prediction(
                s.spec.name, inst.answer, inst.answer, inst.metadata_json, options=inst.options
            )
        except ValueError as exc:
            out.append(f"{inst.qid}: gold answer {inst.answer!r} is refused: {exc}")
            continue
        if got["score"] != 1.0 or got["exact"] != 1.0:
            out.append(f"{inst.qid}: gold answer {inst.answer!r} scores {got['score']}")
    return out


def _deterministic(s: Subject) -> list[str]:
    def key(items):
        return [(i.qid, i.question, i.answer, json.loads(i.metadata_json)) for i in items]

    return [] if key(s.made.get("explicit", ())) == key(s.again) else ["two runs differ"]


CHECKS: dict[str, Callable[[Subject], list[str]]] = {
    "registry-entry": _registry_entry,
    "room": _room,
    "audit-hooks": _audit_hooks,
    "data-file": _data_file,
    "letter-metadata": _letter_metadata,
    "metadata-fields": _metadata_fields,
    "paper-prompt-legend": _paper_legend,
    "gold-scores-one": _gold_scores_one,
    "deterministic": _deterministic,
}
assert set(CHECKS) == set(CONTRACTS)


def breaches(subject: Subject) -> list[tuple[str, str]]:
    """``(contract, detail)`` of every contract ``subject`` breaks."""
    return [(name, detail) for name, check in CHECKS.items() for detail in check(subject)]


def doc_contracts(text: str) -> list[str]:
    """The contract names of docs/extending.md's list (``- **`name`**: ...`` lines)."""
    section = text.split("### The contracts", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^- \*\*`([a-z-]+)`\*\*", section, re.M)

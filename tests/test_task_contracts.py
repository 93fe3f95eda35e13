"""Every task meets the contracts of docs/extending.md ("The contracts"), checked by name.

The registry is walked (a tenth task is walked too); a broken contract fails with its name and
what broke, so a new task's author reads which rule the recipe asks of it. The contracts are
``tests/task_contracts.py``; a self-test plants each breach on a real task's questions and sees
its name reported, and the doc's list and the checks name the same contracts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from misi_bench.builder.core.registry import TASK_SPECS
from misi_bench.builder.tasks import generator, room_of
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import TaskContext
from misi_bench.builder.tasks.data import task_data

from task_contracts import CONTRACTS, Subject, breaches, doc_contracts

DOC = Path(__file__).resolve().parent.parent / "docs" / "extending.md"
#: The split and seed the contracts generate with.
SPLIT, SEED = "test", 0


@pytest.fixture(scope="module")
def annotations(sample_refs):
    """The data files' sample complexes and a partner for two-complex tasks (annotated once)."""
    from misi_bench.builder.chemistry.structure import load_complex

    wanted = {task_data(s.name).expect.get("sample") for s in TASK_SPECS}
    refs = [r for r in sample_refs if r.pdb_id in wanted]
    refs += [r for r in sample_refs if r.pdb_id not in wanted][:1]
    return {r.pdb_id: annotate(load_complex(r)) for r in refs}


def _made(annotations, spec, profile):
    pdb_id = task_data(spec.name).expect.get("sample") or sorted(annotations)[0]
    ctx = TaskContext.for_task(
        spec.name,
        annotations[pdb_id],
        SPLIT,
        SEED,
        profile,
        partners=[p for p in sorted(annotations) if p != pdb_id],
        load_partner=annotations.get,
    )
    return generator(spec.name)(ctx)


def subject(annotations, spec, before=()) -> Subject:
    made = {p: _made(annotations, spec, p) for p in ("explicit", "paper")}
    return Subject(
        spec=spec,
        before=tuple(before),
        room=room_of(spec.name),
        data=task_data(spec.name),
        made=made,
        again=_made(annotations, spec, "explicit"),
    )


@pytest.fixture(scope="module")
def subjects(annotations):
    return {
        spec.name: subject(annotations, spec, TASK_SPECS[:i]) for i, spec in enumerate(TASK_SPECS)
    }


@pytest.mark.parametrize("task", [s.name for s in TASK_SPECS])
def test_every_task_meets_every_contract(task, subjects):
    broken = breaches(subjects[task])
    assert not broken, "\n".join(
        f"task {task} breaks contract {name} (docs/extending.md, The contracts): {detail}"
        for name, detail in broken
    )
    assert subjects[task].made["explicit"], f"{task}: no question for its sample complex"


def _first_of_kind(subjects, carries_options: bool):
    from misi_bench.builder.scoring.kinds import kind_of

    return next(s for s in subjects.values() if kind_of(s.spec).carries_options == carries_options)


def _replace_made(s: Subject, profile: str, edit) -> Subject:
    made = dict(s.made)
    made[profile] = [edit(inst) for inst in made[profile]]
    return dataclasses.replace(s, made=made)


def _with_metadata(change):
    import json

    def edit(inst):
        meta = inst.metadata
        change(meta)
        return dataclasses.replace(inst, metadata_json=json.dumps(meta, sort_keys=True))

    return edit


def test_each_planted_breach_is_named(subjects):
    """One breach per contract, planted on real questions of a real task: the contract's name
    comes back (and no breach of a contract that holds)."""
    letter, other = _first_of_kind(subjects, True), _first_of_kind(subjects, False)
    planted = {
        "registry-entry": dataclasses.replace(
            other, spec=dataclasses.replace(other.spec, form_hint="")
        ),
        "room": dataclasses.replace(letter, room=None),
        "audit-hooks": dataclasses.replace(
            letter, room=dataclasses.replace(letter.room, answer_space=None)
        ),
        "data-file": dataclasses.replace(
            letter, data=dataclasses.replace(letter.data, expect={"sample": "1a28"})
        ),
        "letter-metadata": _replace_made(
            letter,
            "explicit",
            _with_metadata(lambda m: m.update(option_operations=[m["option_operations"][0]] * 4)),
        ),
        "metadata-fields": _replace_made(
            other, "explicit", _with_metadata(lambda m: m.update(note=1))
        ),
        "paper-prompt-legend": _replace_made(
            other,
            "paper",
            lambda inst: dataclasses.replace(inst, question=inst.question.replace("#F2B366", "")),
        ),
        "gold-scores-one": _replace_made(
            other, "explicit", lambda inst: dataclasses.replace(inst, answer="A B C")
        ),
        "deterministic": dataclasses.replace(
            other, again=[dataclasses.replace(i, answer=i.answer + " ") for i in other.again]
        ),
    }
    assert set(planted) == set(CONTRACTS)
    for name, s in planted.items():
        names = {n for n, _ in breaches(s)}
        assert name in names, (name, breaches(s))
    # a letter question without its operations is named too (the metadata type refuses it)
    missing = _replace_made(letter, "explicit", _with_metadata(lambda m: m.pop("operations")))
    assert any(n == "letter-metadata" and "operations" in d for n, d in breaches(missing)), (
        breaches(missing)
    )
    # a number that is not after the tasks before it (here T1's) is named
    early = dataclasses.replace(letter, spec=dataclasses.replace(letter.spec, number=1))
    assert any(n == "registry-entry" and "number 1" in d for n, d in breaches(early))


def test_the_doc_lists_exactly_the_contracts():
    assert doc_contracts(DOC.read_text(encoding="utf-8")) == list(CONTRACTS)

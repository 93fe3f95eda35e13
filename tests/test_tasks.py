"""The nine task generators on every real sample complex."""

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from misi_bench.builder import scoring
from misi_bench.builder.core.profiles import EXPLICIT
from misi_bench.builder.core.registry import TASK_SPECS
from misi_bench.builder.operations.language import parse_operations
from misi_bench.builder.tasks import TASKS, generator
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import TaskContext
from misi_bench.builder.tasks.data import versions_label

from task_expect import command_problems, expect, kind, spec

SNAPSHOT = Path(__file__).parent / "snapshots" / "prompts.json"


@pytest.fixture(scope="session")
def annotations(complexes):
    return {p: annotate(cx) for p, cx in complexes.items()}


def make_ctx(annotations, pdb_id, task, split="test", seed=0, profile=EXPLICIT):
    partners = [p for p in sorted(annotations) if p != pdb_id]
    return TaskContext.for_task(
        task,
        annotations[pdb_id],
        split,
        seed,
        profile,
        partners=partners,
        load_partner=annotations.get,
    )


@pytest.fixture(scope="session")
def generated(annotations):
    out = {}
    for pdb_id in sorted(annotations):
        for task in TASKS:
            out[(pdb_id, task)] = generator(task)(make_ctx(annotations, pdb_id, task))
    return out


@pytest.mark.parametrize("task", TASKS)
def test_every_task_generates_for_every_sample(task, generated, annotations):
    made = {p for p in annotations if generated[(p, task)]}
    asked = {p for p, a in annotations.items() if a.hbonds or not expect(task)["needs_hbond"]}
    assert made == asked, (task, asked - made)


@pytest.mark.parametrize("task", TASKS)
def test_counts_and_ranges_follow_the_registry_and_params(task, generated):
    """Answers within the registry entry's command ranges (or a letter of four distinct
    options); as many questions per complex as the task's data file expects."""
    entry = spec(task)
    for pdb_id in {p for p, t in generated if t == task}:
        items = generated[(pdb_id, task)]
        for inst in items:
            meta = inst.metadata
            assert meta["task"] == task and meta["pdb_id"] == pdb_id and meta["seed"] == 0
            assert len(inst.images) == len(set((s.view_name) for s in inst.images))
            if entry.commands:
                assert not command_problems(task, parse_operations(inst.answer)), inst.answer
            if kind(task).carries_options:
                assert inst.answer in "ABCD" and len(set(inst.options)) == len(inst.options) == 4
                assert len({tuple(o) for o in meta["option_operations"]}) == 4
            if "option_schemes" in meta:
                assert sorted(meta["option_schemes"]) == sorted(
                    ["correct", "magnitudes", "sign_f1", "axis_f1"]
                )
            assert meta.get("target") != pdb_id  # a second complex is another one
        if expect(task)["questions_per_complex"] is not None:
            assert len(items) == expect(task)["questions_per_complex"], (pdb_id, task)


@pytest.mark.parametrize("task", [s.name for s in TASK_SPECS if s.halves])
def test_tasks_with_halves_balance_positives_and_negatives(task, generated):
    kinds = Counter()
    for (_pdb_id, t), items in generated.items():
        for inst in items if t == task else ():
            kinds[inst.metadata["selection"]] += 1
            assert (inst.answer == "No") == (not inst.metadata["positive"])
    positives = kinds["positive"]
    negatives = kinds["nearest"] + kinds["random"]
    assert positives > 10 and abs(positives - negatives) <= 0.25 * positives + len(generated) / 9
    assert kinds["nearest"] > 0 and kinds["random"] > 0


@pytest.mark.parametrize("task", [s.name for s in TASK_SPECS if kind(s.name).carries_options])
def test_letters_spread_over_a_to_d(task, generated):
    letters = Counter(i.answer for (p, t), items in generated.items() if t == task for i in items)
    assert set(letters) == set("ABCD"), (task, letters)


def test_gold_answers_score_one(generated):
    for (_pdb_id, task), items in generated.items():
        for inst in items:
            got = scoring.score_prediction(task, inst.answer, inst.answer, inst.metadata_json)
            assert got["score"] == 1.0 and got["exact"] == 1.0, (inst.qid, inst.answer)


@pytest.mark.parametrize("task", TASKS)
def test_generation_is_deterministic(task, annotations):
    pdb_id = expect(task)["sample"]
    a = generator(task)(make_ctx(annotations, pdb_id, task))
    b = generator(task)(make_ctx(annotations, pdb_id, task))
    assert a and a == b
    c = generator(task)(make_ctx(annotations, pdb_id, task, seed=1))
    if expect(task)["seed_free"]:  # e.g. T9 asks for every bond: only the seed field differs
        assert [(i.question, i.answer) for i in a] == [(i.question, i.answer) for i in c]
    else:
        assert [i.metadata_json for i in a] != [i.metadata_json for i in c], task


def test_train_split_uses_train_counts(annotations):
    items = generator("rotation")(make_ctx(annotations, "1a28", "rotation", split="train"))
    assert len(items) == 6


def test_prompt_snapshots(generated):
    """The exact prompt text of the first question of each task on its data file's sample; an
    intentional change bumps the task's template_version and reruns with
    MISI_UPDATE_SNAPSHOTS=1."""
    current = {task: generated[(expect(task)["sample"], task)][0].question for task in TASKS}
    current["_template_version"] = versions_label(TASKS, EXPLICIT)
    if os.environ.get("MISI_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(
            json.dumps(current, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    frozen = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert frozen == current


@pytest.mark.parametrize("task", TASKS)
def test_prompts_carry_what_the_spec_requires(task, generated):
    for (pdb_id, t), items in generated.items():
        for inst in items[:1] if t == task else ():
            q = inst.question
            assert pdb_id.upper() in q
            assert (
                "Image 1:" in q
                and f"Image {len(inst.images)}:" in q
                and f"Image {len(inst.images) + 1}:" not in q
            )
            assert "hydrogen atoms" in q and "black background" in q
            assert all(text in q for text in expect(task)["explicit_mentions"])
            assert "for example" in q
            if kind(task).carries_options:
                assert all(f"{letter}. " in q for letter in "ABCD")

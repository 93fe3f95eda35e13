"""The nine task generators on every real sample complex."""

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from misi_bench.builder import scoring
from misi_bench.builder.core.profiles import EXPLICIT
from misi_bench.builder.operations.language import Move, Roll, parse_operations
from misi_bench.builder.tasks import TASKS, generator
from misi_bench.builder.tasks.base import TaskContext, annotate
from misi_bench.builder.tasks.data import versions_label

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


def test_every_task_generates_for_every_sample(generated, annotations):
    for task in TASKS:
        made = [p for p in annotations if generated[(p, task)]]
        if task == "interaction_location":
            with_bonds = [p for p, a in annotations.items() if a.hbonds]
            assert set(made) == set(with_bonds)
        else:
            assert len(made) == len(annotations), (task, set(annotations) - set(made))


def test_counts_and_ranges_follow_the_params(generated):
    for (pdb_id, task), items in generated.items():
        for inst in items:
            meta = inst.metadata
            assert meta["task"] == task and meta["pdb_id"] == pdb_id and meta["seed"] == 0
            assert len(inst.images) == len(set((s.view_name) for s in inst.images))
            if task == "translation":
                (op,) = parse_operations(inst.answer)
                assert isinstance(op, Move) and op.axis in "xy" and 1 <= abs(op.distance) <= 4
            elif task == "rotation":
                (op,) = parse_operations(inst.answer)
                assert isinstance(op, Roll) and op.angle % 15 == 0 and 15 <= abs(op.angle) <= 90
            elif task == "zooming":
                (op,) = parse_operations(inst.answer)
                assert op.axis == "z" and 40 <= op.distance <= 60
            elif task == "docking":
                roll, move = parse_operations(inst.answer)
                assert isinstance(roll, Roll) and isinstance(move, Move) and move.axis == "x"
                assert 15 <= abs(roll.angle) <= 90
            elif task in ("translation_rotation", "rotation_rotation", "interaction_location"):
                assert inst.answer in "ABCD" and len(inst.options) == 4
                assert len(set(inst.options)) == 4
                if task != "interaction_location":
                    assert len({tuple(o) for o in meta["option_operations"]}) == 4
                    assert sorted(meta["option_schemes"]) == sorted(
                        ["correct", "magnitudes", "sign_f1", "axis_f1"]
                    )
            if task == "translation_rotation":
                assert meta["target"] != pdb_id
        counts = {
            "translation": 2,
            "rotation": 3,
            "zooming": 2,
            "translation_rotation": 3,
            "rotation_rotation": 3,
            "docking": 3,
            "pocket_ligand": 1,
        }
        if task in counts:
            assert len(items) == counts[task], (pdb_id, task)


def test_t4_balances_positives_and_negatives(generated):
    kinds = Counter()
    for (_pdb_id, task), items in generated.items():
        if task == "residue_ligand":
            for inst in items:
                kinds[inst.metadata["selection"]] += 1
                assert (inst.answer == "No") == (not inst.metadata["positive"])
    positives = kinds["positive"]
    negatives = kinds["nearest"] + kinds["random"]
    assert positives > 10 and abs(positives - negatives) <= 0.25 * positives + len(generated) / 9
    assert kinds["nearest"] > 0 and kinds["random"] > 0


def test_letters_spread_over_a_to_d(generated):
    for task in ("translation_rotation", "rotation_rotation", "interaction_location"):
        letters = Counter(
            i.answer for (p, t), items in generated.items() if t == task for i in items
        )
        assert set(letters) == set("ABCD"), (task, letters)


def test_gold_answers_score_one(generated):
    for (_pdb_id, task), items in generated.items():
        for inst in items:
            got = scoring.score_prediction(task, inst.answer, inst.answer, inst.metadata_json)
            assert got["score"] == 1.0 and got["exact"] == 1.0, (inst.qid, inst.answer)


def test_generation_is_deterministic(annotations):
    for task in TASKS:
        # 1A28 has no H-bond under the default (chimerax) criteria, so T8 has no question there
        pdb_id = "1hvr" if task == "interaction_location" else "1a28"
        a = generator(task)(make_ctx(annotations, pdb_id, task))
        b = generator(task)(make_ctx(annotations, pdb_id, task))
        assert a == b
        c = generator(task)(make_ctx(annotations, pdb_id, task, seed=1))
        if task not in ("pocket_ligand",):
            assert [i.metadata_json for i in a] != [i.metadata_json for i in c], task


def test_train_split_uses_train_counts(annotations):
    items = generator("rotation")(make_ctx(annotations, "1a28", "rotation", split="train"))
    assert len(items) == 6


def test_prompt_snapshots(generated):
    """The exact prompt text of the first question of each task on 1A28; an intentional change
    bumps the template version and reruns with MISI_UPDATE_SNAPSHOTS=1."""
    # (T8 on 1HVR: 1A28 has no H-bond under the default chimerax criteria)
    current = {
        task: generated[("1hvr" if task == "interaction_location" else "1a28", task)][0].question
        for task in TASKS
    }
    current["_template_version"] = versions_label(TASKS, EXPLICIT)
    if os.environ.get("MISI_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(
            json.dumps(current, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    frozen = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert frozen == current


def test_prompts_carry_what_the_spec_requires(generated):
    for (pdb_id, task), items in generated.items():
        for inst in items[:1]:
            q = inst.question
            assert pdb_id.upper() in q
            assert (
                "Image 1:" in q
                and f"Image {len(inst.images)}:" in q
                and f"Image {len(inst.images) + 1}:" not in q
            )
            assert "hydrogen atoms" in q and "black background" in q
            if task not in ("residue_ligand", "pocket_ligand"):
                assert "+x points to the right" in q
            assert "for example" in q
            if task in ("translation_rotation", "rotation_rotation", "interaction_location"):
                assert all(f"{letter}. " in q for letter in "ABCD")

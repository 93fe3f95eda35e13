"""The two build profiles (issue 22): `paper` asks what the paper's prompts ask, `explicit` keeps
the earlier questions; both on the embedded real samples."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from misi_bench.builder import scoring
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.core.profiles import (
    DEFAULT_PROFILE,
    check_profile,
    id_for_profile,
    profile_of_id,
    profile_of_metadata,
    profile_of_rows,
    question_id,
)
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.dataset.merge import tiny_ids_by_stratum
from misi_bench.builder.tasks import TASKS, generator
from misi_bench.builder.tasks.base import TaskContext, annotate

from card_support import front_matter, sections, tables
from task_expect import expect

ROOT = Path(__file__).resolve().parents[1]
PAPER_SIX = ["front", "left", "top", "back", "right", "bottom"]
#: What the paper's prompts never state (Appendix C): camera, field of view, unit, ranges, H-bond rule.
WITHHELD = [
    r"camera",
    r"field of view",
    r"\b30 degree",
    r"Å",
    r"4\.1",
    r"100°",
    r"from -4 to 4",
    r"40 to 60",
    r"multiple of 15",
    r"metal",
]


@pytest.fixture(scope="module")
def annotations(complexes):
    return {p: annotate(cx) for p, cx in complexes.items()}


def ctx(annotations, pdb_id, task, profile, split="test"):
    return TaskContext.for_task(
        task,
        annotations[pdb_id],
        split,
        0,
        profile,
        partners=[p for p in sorted(annotations) if p != pdb_id],
        load_partner=annotations.get,
    )


@pytest.fixture(scope="module")
def paper(annotations):
    return {
        (p, t): generator(t)(ctx(annotations, p, t, "paper"))
        for p in sorted(annotations)
        for t in TASKS
    }


def test_default_profile_is_paper_and_unknown_profiles_are_refused():
    assert DEFAULT_PROFILE == "paper" and BuildConfig().profile == "paper"
    with pytest.raises(MisiError, match="unknown profile 'papr'"):
        check_profile("papr")
    with pytest.raises(MisiError, match="unknown profile"):
        BuildConfig(profile="strict")


def test_paper_prompts_withhold_what_the_paper_withholds(paper):
    for (pdb_id, task), items in paper.items():
        for inst in items[:2]:
            q = " ".join(inst.question.split())
            assert pdb_id.upper() in q, (task, "the PDB id")
            for pattern in WITHHELD:
                assert not re.search(pattern, q, re.IGNORECASE), (task, pattern)
            assert "#BF99F2" in q and "#F2B366" in q and "oxygen atoms are red" in q
            assert "{" not in q and "}" not in q, (task, "unfilled placeholder")


@pytest.mark.parametrize("task", TASKS)
def test_paper_prompts_carry_the_papers_output_lines_and_image_order(task, paper):
    """What each task's data file expects its paper prompt to say (the paper's output-format
    example, image lines) and the order of its images."""
    want = expect(task)
    for (_pdb_id, t), items in paper.items():
        for inst in items[:1] if t == task else ():
            assert all(text in inst.question for text in want["paper_mentions"]), task
            if "paper_views" in want:
                assert [s.view_name for s in inst.images] == list(want["paper_views"])
            assert inst.qid.endswith("p") and profile_of_id(inst.qid) == "paper"
            assert inst.metadata["profile"] == "paper"


def test_paper_t4_does_not_name_the_residue(paper):
    for (_pdb_id, task), items in paper.items():
        for inst in items if task == "residue_ligand" else ():
            r = inst.metadata["residue"]
            assert f"{r['name']} {r['number']}" not in inst.question


def test_paper_t8_names_the_bond_parts(paper):
    for (_pdb_id, task), items in paper.items():
        for inst in items if task == "interaction_location" else ():
            res, num, atom, chain, lig = re.match(
                r"^(\S+) (\S+) (\S+) (\S+), (.+)$", inst.metadata["hbond"]
            ).groups()
            assert f"chain {chain}, residue {res} {num}, atom {atom}" in inst.question
            assert f"on the ligand side: atom {lig}." in inst.question
            assert all(f"{letter}. move x " in inst.question for letter in "ABCD")


def test_paper_t4_asks_every_bonded_residue_and_draws_negatives_at_random(paper, annotations):
    for pdb_id, ann in annotations.items():
        items = paper[(pdb_id, "residue_ligand")]
        bonded = {(b.chain, b.res_number, b.ins_code) for b in ann.hbonds}
        positives = [i for i in items if i.metadata["positive"]]
        assert len(positives) == len(bonded), pdb_id  # no cap in either split
        negatives = [i for i in items if not i.metadata["positive"]]
        assert len(negatives) == max(len(positives), 1)
        assert {i.metadata["selection"] for i in negatives} <= {"random"}
        assert {i.metadata["tiny_stratum"] for i in items} <= {"positive", "negative"}


def test_explicit_profile_is_the_earlier_generator(annotations):
    for task in ("translation", "residue_ligand", "pocket_ligand"):
        inst = generator(task)(ctx(annotations, "1a28", task, "explicit"))[0]
        assert "profile" not in inst.metadata and not inst.qid.endswith("p")
        assert profile_of_metadata(inst.metadata_json) == "explicit"
        assert "for example" in inst.question
    t1 = generator("translation")(ctx(annotations, "1a28", "translation", "explicit"))[0]
    text = " ".join(t1.question.split())
    assert "camera stands" in text and "30 degree field of view" in text


def test_ids_and_rows_name_their_profile():
    assert question_id("rotation", "1a28", 3, "paper") == "rotation-1a28-003p"
    assert question_id("rotation", "1a28", 3, "explicit") == "rotation-1a28-003"
    assert (
        profile_of_id("rotation-1a28-003") == "explicit"
        and profile_of_id("rotation-1a28-003p") == "paper"
    )
    assert id_for_profile("rotation-1a28-003", "paper") == "rotation-1a28-003p"
    assert id_for_profile("rotation-1a28-003p", "explicit") == "rotation-1a28-003"
    assert profile_of_rows([{"metadata": '{"profile":"paper"}'}]) == "paper"
    assert profile_of_rows([{"metadata": "{}"}]) == "explicit"
    with pytest.raises(MisiError, match="several profiles"):
        profile_of_rows([{"metadata": '{"profile":"paper"}'}, {"metadata": "{}"}])
    with pytest.raises(MisiError, match="unknown profile 'nope'"):
        profile_of_rows([{"metadata": '{"profile":"nope"}'}])


def test_paper_t9_items_must_name_every_field():
    gold = "ARG 5 NH1 A, O3; ASN 4 OD1 A, O2"
    partial = "ASN OD1, O2; ARG 5 NH1 A, O3"
    paper = scoring.score_prediction("pocket_ligand", partial, gold, '{"profile":"paper"}')
    explicit = scoring.score_prediction("pocket_ligand", partial, gold, "{}")
    assert paper["score"] == 0.5 and explicit["score"] == 1.0
    full = scoring.score_prediction(
        "pocket_ligand", "ASN 4 OD1 A, O2; ARG 5 NH1 A, O3", gold, '{"profile":"paper"}'
    )
    assert full["score"] == 1.0 and full["exact"] == 1.0
    # T4 in the paper's format, and an empty truth answered No / None
    assert (
        scoring.score_prediction(
            "residue_ligand", "Yes: ARG NH2, O1B", "Yes: ARG NH2, O1B", '{"profile":"paper"}'
        )["score"]
        == 1.0
    )
    for said in ("None", "No"):
        assert (
            scoring.score_prediction("pocket_ligand", said, "None", '{"profile":"paper"}')["score"]
            == 1.0
        )
    with pytest.raises(ValueError, match="unknown profile"):
        scoring.score_prediction("pocket_ligand", "None", "None", '{"profile":"fancy"}')


def _stratum_row(k: int, stratum: str | None) -> dict:
    meta = {
        "task": "residue_ligand",
        "pdb_id": "x",
        "k": k,
        "seed": 0,
        "split": "test",
        "template_version": "1",
        "params_version": "1",
        "camera": {"distance": 1.0, "fov_deg": 30.0, "size": 512},
        "hbonds": [],
        **({"tiny_stratum": stratum} if stratum else {}),
    }
    return {
        "id": f"residue_ligand-x-{k:03d}p",
        "task": "residue_ligand",
        "metadata": json.dumps(meta),
    }


def test_tiny_draws_per_stratum():
    rows = [_stratum_row(k, "positive" if k % 5 else "negative") for k in range(200)]
    tiny = tiny_ids_by_stratum(rows, 10, 0)
    strata = [json.loads(r["metadata"])["tiny_stratum"] for r in rows if r["id"] in tiny]
    assert strata.count("positive") == 10 and strata.count("negative") == 10
    plain = [_stratum_row(k, None) for k in range(30)]
    assert len(tiny_ids_by_stratum(plain, 10, 0)) == 10


def test_docs_page_holds_the_cards_fidelity_table():
    table = (ROOT / "dataset_card" / "fidelity.md").read_text(encoding="utf-8").strip()
    assert table in (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    assert len([line for line in table.splitlines() if re.match(r"^\| T\d ", line)]) == 9


def _cli(*args, cwd=None):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory, data_dir, explicit_build):
    """Copies of the session builds: ``paper`` (every task) and ``explicit`` (T1, T3, T4, T9),
    both of four samples with tiny 2; copies, since a test builds into the ``paper`` one."""
    root = tmp_path_factory.mktemp("profiles")
    manifests = []
    for name, folder in (("paper", data_dir), ("explicit", explicit_build)):
        shutil.copytree(folder, root / name, ignore=shutil.ignore_patterns(".work"))
        manifests.append(json.loads((root / name / "manifest.json").read_text(encoding="utf-8")))
    return root, *manifests


def test_profile_is_recorded_and_part_of_the_identity(two_builds):
    root, paper, explicit = two_builds
    assert paper["profile"] == "paper" and explicit["profile"] == "explicit"
    assert paper["config_hash"] != explicit["config_hash"]
    assert "profile" not in explicit["config"] and paper["config"]["profile"] == "paper"
    card = (root / "paper" / "README.md").read_text(encoding="utf-8")
    parts = sections(front_matter(card)[1])
    assert "Profile: `paper`" in parts and "Profile: `explicit`" not in parts
    assert "comparable with this build" in parts["Evaluate"] and "(not comparable)" not in card
    card = (root / "explicit" / "README.md").read_text(encoding="utf-8")
    parts = sections(front_matter(card)[1])
    assert "Profile: `explicit`" in parts
    table1 = tables(card[card.index("Table 1, weighted score") :])[0]
    assert any(next(iter(r.values())).startswith("human (not comparable)") for r in table1)
    with pytest.raises(MisiError, match="holds a build of profile 'paper'"):
        build_dataset(
            out=root / "paper",
            profile="explicit",
            source="samples",
            limit=4,
            tasks=["pocket_ligand"],
            progress=False,
            audit=False,
        )
    # the paper's tiny T4: as many positives as negatives
    import pyarrow.parquet as pq

    table = pq.read_table(
        next((root / "paper" / "residue_ligand").glob("tiny-*.parquet")), columns=["answer"]
    )
    answers = table.column("answer").to_pylist()
    assert sum(a == "No" for a in answers) == 2 and sum(a != "No" for a in answers) == 2, answers


def test_score_refuses_the_other_profiles_predictions_and_labels_the_papers_rows(
    two_builds, tmp_path
):
    root, _, _ = two_builds
    import pyarrow.parquet as pq

    def gold_file(build, name):
        rows = []
        for shard in sorted((build / "pocket_ligand").glob("test-*.parquet")):
            t = pq.read_table(shard, columns=["id", "answer"]).to_pylist()
            rows += [{"id": r["id"], "prediction": r["answer"]} for r in t]
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return path

    paper_preds, explicit_preds = (
        gold_file(root / "paper", "p.jsonl"),
        gold_file(root / "explicit", "e.jsonl"),
    )
    ok = _cli(
        "score",
        "--dataset",
        str(root / "paper"),
        "--predictions",
        str(paper_preds),
        "--configs",
        "pocket_ligand",
    )
    assert ok.returncode == 0, ok.stderr
    assert (
        "profile: paper" in ok.stdout
        and "beside this 'paper' build" in ok.stdout
        and "not comparable" not in ok.stdout
    )
    ok = _cli(
        "score",
        "--dataset",
        str(root / "explicit"),
        "--predictions",
        str(explicit_preds),
        "--configs",
        "pocket_ligand",
    )
    assert ok.returncode == 0 and "human (not comparable)" in ok.stdout
    bad = _cli(
        "score",
        "--dataset",
        str(root / "paper"),
        "--predictions",
        str(explicit_preds),
        "--configs",
        "pocket_ligand",
    )
    assert bad.returncode == 2
    # one error line, before it only the notice that the file records no build to check
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    notices = [line for line in lines if "notice:" in line and "record no build" in line]
    errors = [line for line in lines if line not in notices]
    assert (
        len(errors) == 1
        and len(notices) <= 1
        and "made for a 'explicit' build" in errors[0]
        and "'paper' build" in errors[0]
    )
    bad = _cli("build", "--profile", "fancy", "--out", str(tmp_path / "x"))
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "unknown profile 'fancy'" in lines[0]


def test_pixel_solver_answers_paper_t1_without_any_camera_constant(two_builds, monkeypatch):
    """On paper questions (no camera distance, no field of view in the prompt) T1 is read with a
    bond-length ruler; the camera constants are not touched (poisoned here) and T3 is declined."""
    from misi_bench.builder.checks import pixel_solver

    root, _, _ = two_builds
    monkeypatch.setattr(pixel_solver, "FOV_DEG", float("nan"))
    scores = pixel_solver.scores(root / "paper", "translation")
    assert len(scores) >= 8 and sum(scores) / len(scores) >= 0.9, scores
    row = next(
        pixel_solver.iter_config_rows(
            root / "paper",
            "translation",
            "train",
            ["task", "question", "images", "answer", "metadata"],
        )
    )
    assert "camera" not in row["question"]
    zoom = pixel_solver.TASKS[-1]
    assert pixel_solver.solve(zoom, row["question"], [i["bytes"] for i in row["images"]]) == ""

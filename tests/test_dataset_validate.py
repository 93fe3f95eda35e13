"""The validator catches each kind of defect it claims to check, on a real build."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.dataset.manifest import read_manifest
from misi_bench.builder.dataset.validate import validate_dataset


@pytest.fixture()
def copy(data_dir, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(data_dir, out, ignore=shutil.ignore_patterns(".work"))
    return out


def _tamper(folder, task: str, split: str, change) -> str:
    path = sorted((folder / task).glob(f"{split}-*.parquet"))[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    rid = change(rows)
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    return rid


def test_untouched_build_validates(data_dir):
    report = validate_dataset(data_dir, source="samples")
    assert report.ok, report.problems[:5]
    manifest = read_manifest(data_dir)
    assert set(report.per_task) == set(manifest["counts"])
    assert report.checked == sum(sum(c.values()) for c in manifest["counts"].values())


def test_wrong_answer_format_and_broken_png(copy):
    def change(rows):
        rows[0]["answer_format"] = "multiple_choice"
        rows[1]["images"][0]["bytes"] = b"GIF89a" + rows[1]["images"][0]["bytes"][6:]
        return rows[0]["id"]

    rid = _tamper(copy, "translation", "train", change)
    report = validate_dataset(copy, source="samples")
    assert any(p.startswith(f"{rid}: answer_format") for p in report.problems), report.problems
    assert any("not a PNG" in p for p in report.problems)


def test_row_count_and_repeated_id(copy):
    def change(rows):
        rows.append(dict(rows[0]))
        return rows[0]["id"]

    rid = _tamper(copy, "pocket_ligand", "train", change)
    report = validate_dataset(copy, source="samples")
    assert f"pocket_ligand/train: repeated id {rid}" in report.problems
    assert any(
        p.startswith("pocket_ligand/train:") and "manifest says" in p for p in report.problems
    )


def test_complex_in_two_splits(copy):
    test_ids = {
        r["pdb_id"]
        for r in pq.read_table(sorted((copy / "rotation").glob("test-*.parquet"))[0]).to_pylist()
    }
    moved = sorted(test_ids)[0]

    def change(rows):
        rows[0]["pdb_id"] = moved
        return rows[0]["id"]

    _tamper(copy, "pocket_ligand", "train", change)
    report = validate_dataset(copy, source="samples")
    assert any(p.startswith(f"complex {moved} is in several splits") for p in report.problems), (
        report.problems
    )


def test_wrong_hbond_answer(copy):
    def change(rows):
        rows[0]["answer"] = "None" if rows[0]["answer"] != "None" else "ASN 1 OD1 A, O1"
        return rows[0]["id"]

    rid = _tamper(copy, "pocket_ligand", "train", change)
    report = validate_dataset(copy, source="samples")
    assert f"{rid}: recomputed H-bonds differ from the answer" in report.problems


def test_missing_manifest(tmp_path):
    report = validate_dataset(tmp_path)
    assert not report.ok and "no readable manifest.json" in report.problems[0]


def test_validation_is_the_same_for_any_worker_count(copy):
    def change(rows):
        rows[0]["answer"] = "None" if rows[0]["answer"] != "None" else "ASN 1 OD1 A, O1"
        rows.append(dict(rows[1]))
        return rows[0]["id"]

    rid = _tamper(copy, "pocket_ligand", "train", change)
    one = validate_dataset(copy, source="samples", workers=1)
    two = validate_dataset(copy, source="samples", workers=2)
    assert f"{rid}: recomputed H-bonds differ from the answer" in one.problems
    assert (one.problems, one.checked, one.per_task, one.warnings) == (
        two.problems,
        two.checked,
        two.per_task,
        two.warnings,
    )

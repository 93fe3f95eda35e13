"""The validator catches each kind of defect it claims to check, on a real build."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.checks.validate import validate_dataset
from misi_bench.builder.store.manifest import read_manifest


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


def test_a_fault_in_the_generators_reading_does_not_validate_itself(tmp_path, monkeypatch):
    """The validator and the audit read structures on a path of their own
    (``check_structures``), never through the generator's ``units.AnnotationCache``: a fault
    planted in the generator's reader (every complex read without its hydrogen bonds, as a
    reading bug that lost the donors would give) makes T9 answers (``None`` for every pocket)
    that the validator recomputes differently, so the build does not validate. Through the generator's cache the
    validator would have read the same fault and agreed with it."""
    import dataclasses

    from misi_bench.builder.checks import audit
    from misi_bench.builder.checks.check_structures import CheckStructures
    from misi_bench.builder.dataset import units
    from misi_bench.builder.dataset.build import build_dataset
    from misi_bench.builder.dataset.config import BuildConfig, BuildOptions

    real = units.AnnotationCache.get
    monkeypatch.setattr(
        units.AnnotationCache,
        "get",
        lambda self, pdb: dataclasses.replace(real(self, pdb), hbonds=()),
    )
    out = tmp_path / "faulty"
    what = BuildConfig(source="samples", limit=3, tasks=("pocket_ligand",))
    build_dataset(BuildOptions(what, out=out, validate=False, audit=False, progress=False))
    gold = [
        r["answer"]
        for r in pq.read_table(next((out / "pocket_ligand").glob("*.parquet"))).to_pylist()
    ]
    assert set(gold) == {"None"}  # the fault reached the generator's answers
    report = validate_dataset(out, source="samples")
    assert not report.ok
    # 1a28 has no pocket-ligand H-bond: its "None" is right; the other two are caught
    assert report.problems == [
        f"pocket_ligand-{pdb}-000p: recomputed H-bonds differ from the answer"
        for pdb in ("1afs", "1drf")
    ], report.problems
    # the audit reads through the same own path
    auditor = audit._Auditor(read_manifest(out), "samples")
    assert isinstance(auditor.annotations, CheckStructures)
    assert auditor.load("1afs").hbonds, "the audit's reading has the bonds the fault removed"

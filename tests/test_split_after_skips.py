"""Splits are drawn around the complexes a build skips (issue 39, part 2): skipped complexes
cannot take every test slot; a split file whose test complexes are all skipped is refused."""

import json
import shutil

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.store.sources import assign_splits

GOOD = ("1afs", "1hvr", "2zmm", "4cup")
#: the two lowest split hashes of these six (seed 0): a draw made before the skips gives them the
#: two test slots
BROKEN = ("1a28", "1drf")


def _root(sample_refs, tmp_path):
    """Four real sample complexes and two whose ligand file is empty (no MOL2 beside it)."""
    root = tmp_path / "root"
    for ref in sample_refs:
        if ref.pdb_id in GOOD + BROKEN:
            shutil.copytree(ref.path, root / ref.pdb_id)
    for pdb_id in BROKEN:
        (root / pdb_id / f"{pdb_id}_ligand.sdf").write_text("")
        for mol2 in (root / pdb_id).glob("*.mol2"):
            mol2.unlink()
    return root


def test_the_draw_before_the_skips_gave_them_the_test_split():
    ids = sorted(GOOD + BROKEN)
    before = assign_splits(ids, 0)
    assert sorted(p for p in ids if before[p] == "test") == sorted(BROKEN)
    after = assign_splits(ids, 0, skipped=frozenset(BROKEN))
    assert sorted(p for p in GOOD if after[p] == "test") == ["1afs", "4cup"]


def test_skipped_complexes_do_not_empty_the_test_split(sample_refs, tmp_path):
    """Was '24 train + 0 test', exit 0: now two readable complexes are in test, on a resumed
    build too (nothing redone), and the skipped ones are named (the hash rule, ``--split hash``;
    the identity split's draw around skips: below)."""
    root = _root(sample_refs, tmp_path)
    out = tmp_path / "out"
    more = {"tasks": ["pocket_ligand"], "progress": False, "split": "hash"}
    manifest = build_dataset(source=root, out=out, **more)
    assert set(manifest["skipped_complexes"]) == set(BROKEN)
    assert all(f"{p}_ligand.sdf" in why for p, why in manifest["skipped_complexes"].items())
    counts = manifest["counts"]["pocket_ligand"]
    assert counts["test"] > 0 and counts["train"] > 0
    assert manifest["validation"]["ok"]
    statuses = {
        p.name.split(".")[0]: json.loads(p.read_text())
        for p in out.glob(".work/*/complexes/*.status.json")
    }
    assert sorted(p for p, s in statuses.items() if s["split"] == "test" and s["ok"]) == [
        "1afs",
        "4cup",
    ]
    again = build_dataset(source=root, out=out, **more)
    assert again["counts"] == manifest["counts"]


def test_identity_split_draws_around_skipped_complexes(sample_refs, tmp_path):
    """The default identity split: the first draw (before any unit) puts both broken complexes
    in test (seed 1); once they are skipped the split is drawn again around them and two
    readable complexes are in test."""
    root = _root(sample_refs, tmp_path)
    out = tmp_path / "out"
    from misi_bench.builder.dataset.build import plan
    from misi_bench.builder.dataset.config import BuildConfig

    first = plan(BuildConfig(source=str(root), tasks=("pocket_ligand",), seed=1))[1]
    assert {p for p in first if first[p] == "test"} == set(BROKEN)
    manifest = build_dataset(source=root, out=out, tasks=["pocket_ligand"], seed=1, progress=False)
    assert set(manifest["skipped_complexes"]) == set(BROKEN)
    readable_test = [p for p, e in manifest["inputs"].items() if e["split"] == "test" and p in GOOD]
    assert len(readable_test) == 2 and manifest["complexes"]["test"] == 2
    assert manifest["split"]["check"]["highest"]["identity"] < 0.3
    assert manifest["validation"]["ok"]


def test_split_file_whose_test_complexes_are_all_skipped_is_refused(sample_refs, tmp_path):
    root = _root(sample_refs, tmp_path)
    split = tmp_path / "split.csv"
    split.write_text("pdb_id,split\n1a28,test\n1drf,test\n")
    with pytest.raises(MisiError, match=r"split\.csv: every complex it puts in test was skipped"):
        build_dataset(
            source=root,
            out=tmp_path / "out",
            tasks=["pocket_ligand"],
            split_file=split,
            progress=False,
        )
    assert not (tmp_path / "out" / "manifest.json").exists()

"""Unit tests of the dataset layer's modules: sources, config, parquet, manifest, merge, card."""

from __future__ import annotations

import hashlib
import json
import shutil

import datasets
import pytest
from misi_bench.builder.core.errors import InputError, MisiError
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.dataset import card
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.dataset.merge import tiny_ids
from misi_bench.builder.store import manifest as manifest_io
from misi_bench.builder.store import parquet, sources

from card_support import front_matter, table_under

# ---------------------------------------------------------------------------- sources


def test_discover_samples_is_sorted_and_complete(sample_refs):
    refs = sources.discover("samples")
    assert [r.pdb_id for r in refs] == sorted(r.pdb_id for r in sample_refs)
    assert all(r.kind == "pdbbind" for r in refs)


def test_discover_folder_finds_complex_folders_only(sample_refs, tmp_path):
    for ref in sample_refs[:2]:
        shutil.copytree(ref.path, tmp_path / ref.pdb_id.upper())
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a complex")
    refs = sources.discover(tmp_path)
    assert [r.pdb_id for r in refs] == sorted(r.pdb_id for r in sample_refs[:2])


def test_discover_errors_name_the_input(tmp_path):
    with pytest.raises(InputError, match="not a folder") as exc:
        sources.discover(tmp_path / "missing")
    assert str(tmp_path / "missing") in str(exc.value)
    with pytest.raises(InputError, match="no complex folders"):
        sources.discover(tmp_path)


def test_split_file_rows(tmp_path):
    path = tmp_path / "split.csv"
    path.write_text("pdb_id,split\n1ABC,test\n# comment\n2def,train\n\n")
    assert sources.read_split_file(path) == {"1abc": "test", "2def": "train"}
    path.write_text("1abc,validation\n")
    with pytest.raises(InputError, match="bad row") as exc:
        sources.read_split_file(path)
    assert str(path) in str(exc.value)
    with pytest.raises(InputError, match="cannot read"):
        sources.read_split_file(tmp_path / "absent.csv")


def _atom3d_lists(folder, train, val, test):
    folder.mkdir(parents=True, exist_ok=True)
    for name, ids in (("train", train), ("val", val), ("test", test)):
        (folder / f"{name}.txt").write_text("".join(f"{p.upper()}\n" for p in ids))
    return folder


def test_split_file_atom3d_lists(sample_refs, tmp_path):
    """ATOM3D's published form (train.txt / val.txt / test.txt, one PDB id per line), as a
    folder or as the files joined by commas: val and unlisted complexes are left out."""
    from misi_bench.builder.dataset.config import BuildConfig
    from misi_bench.builder.store.split_files import EXCLUDED

    ids = sorted(r.pdb_id for r in sample_refs)
    train, val, test, unlisted = ids[:8], ids[8:10], ids[10:14], ids[14:]
    folder = _atom3d_lists(tmp_path / "atom3d", train, val, test)
    got = sources.assign_splits(ids, seed=0, split_file=folder)
    assert {p for p, s in got.items() if s == "train"} == set(train)
    assert {p for p, s in got.items() if s == "test"} == set(test)
    assert {p for p, s in got.items() if s == EXCLUDED} == set(val + unlisted)
    joined = ",".join(str(folder / f"{n}.txt") for n in ("test", "train", "val"))
    assert sources.assign_splits(ids, seed=0, split_file=joined) == got
    # without val.txt: val complexes are simply unlisted, so left out all the same
    (folder / "val.txt").unlink()
    assert sources.assign_splits(ids, seed=0, split_file=folder) == got
    # the config hash follows the lists' content
    one = BuildConfig(source="samples", split_file=str(folder)).config_hash
    (folder / "test.txt").write_text("".join(f"{p}\n" for p in test[:-1]))
    assert BuildConfig(source="samples", split_file=str(folder)).config_hash != one


def test_split_file_errors_name_the_file_and_line(sample_refs, tmp_path):
    ids = sorted(r.pdb_id for r in sample_refs)
    folder = _atom3d_lists(tmp_path / "a", ids[:3], [], ids[3:5])
    (folder / "test.txt").write_text(f"{ids[3]}\nnot-an-id\n")
    with pytest.raises(InputError, match="line 2: 'not-an-id' is not a 4-character PDB id") as exc:
        sources.read_split_file(folder)
    assert "test.txt" in str(exc.value)
    (folder / "test.txt").write_text(f"{ids[0]}\n")  # also in train.txt
    with pytest.raises(InputError, match=f"line 1: {ids[0]} is also in train.txt"):
        sources.read_split_file(folder)
    (folder / "test.txt").unlink()
    with pytest.raises(InputError, match="split folder lacks test.txt"):
        sources.read_split_file(folder)
    with pytest.raises(InputError, match="one split list alone"):
        sources.read_split_file(folder / "train.txt")
    with pytest.raises(InputError, match="named train.txt, val.txt or test.txt"):
        sources.read_split_file(f"{folder / 'train.txt'},{folder / 'other.txt'}")
    with pytest.raises(InputError, match="lacks test.txt"):
        sources.read_split_file(f"{folder / 'train.txt'},{folder / 'val.txt'}")
    big = tmp_path / "big.csv"
    big.write_text("x" * 300 + ",train\n")
    with pytest.raises(InputError, match="line 1 is over 200 characters"):
        sources.read_split_file(big)


def test_assign_splits_is_deterministic_and_stable_when_complexes_are_added(tmp_path):
    ids = [f"{k}x{k:02d}" for k in range(60)]
    first = sources.assign_splits(ids, seed=3)
    assert first == sources.assign_splits(list(reversed(ids)), seed=3)
    grown = sources.assign_splits(ids + ["9zzz", "9zzy"], seed=3)
    assert all(grown[p] == first[p] for p in ids)
    assert 2 <= sum(v == "test" for v in first.values()) < 30
    assert first != sources.assign_splits(ids, seed=4)
    few = sources.assign_splits(ids[:4], seed=3)
    assert sum(v == "test" for v in few.values()) >= 2
    csv = tmp_path / "s.csv"
    csv.write_text(f"{ids[0]},test\n")
    fixed = sources.assign_splits(ids[:3], seed=3, split_file=csv)
    assert fixed == {ids[0]: "test", ids[1]: "train", ids[2]: "train"}


def test_file_checksums(sample_refs):
    ref = sample_refs[0]
    sums = sources.file_checksums(ref)
    assert set(sums) == {p.name for p in ref.path.iterdir() if p.is_file()}
    name, digest = next(iter(sorted(sums.items())))
    assert digest == hashlib.sha256((ref.path / name).read_bytes()).hexdigest()


# ---------------------------------------------------------------------------- config


def test_build_config_checks_and_hash():
    base = BuildConfig()
    assert base.tasks == TASK_NAMES and base.image_size == 512
    assert BuildConfig(tasks=("pocket_ligand", "rotation")).tasks == ("rotation", "pocket_ligand")
    with pytest.raises(MisiError, match="unknown task"):
        BuildConfig(tasks=("rotate",))
    for size in (8, 5000, 300.5):
        with pytest.raises(MisiError, match="image size"):
            BuildConfig(image_size=size)
    with pytest.raises(MisiError, match="seed"):
        BuildConfig(seed=-1)
    assert BuildConfig(seed=1).config_hash != base.config_hash
    assert (
        BuildConfig(max_shard_bytes=1 << 20).config_hash == base.config_hash
    )  # layout, not content
    fields = base.generation_fields()
    assert {"builder_version", "render_version", "template_version", "params_version"} <= set(
        fields
    )


# ---------------------------------------------------------------------------- parquet + manifest


def _rows(
    n: int, task: str = "rotation", split: str = "test", image_bytes: int = 40_000
) -> list[dict]:
    return [
        {
            "id": f"{task}-1abc-{k:03d}",
            "task": task,
            "split": split,
            "pdb_id": "1abc",
            "images": [{"bytes": bytes([k % 251]) * image_bytes, "path": None}],
            "image_views": ["front"],
            "question": f"q{k}",
            "options": [],
            "answer": "roll x 15",
            "answer_format": "fill_in",
            "metadata": "{}",
        }
        for k in range(n)
    ]


def test_shard_writer_splits_by_bytes_and_names_shards(tmp_path):
    rows = _rows(10)
    paths = parquet.write_split(rows, tmp_path / "rotation", "test", max_bytes=150_000)
    names = [p.name for p in paths]
    assert len(paths) == 4  # ~40 kB a row, at most 150 kB a shard: 3 + 3 + 3 + 1 rows
    assert names == [f"test-{k:05d}-of-00004.parquet" for k in range(4)]
    back = list(parquet.iter_config_rows(tmp_path, "rotation", "test"))
    assert [r["id"] for r in back] == [r["id"] for r in rows]
    assert back[3]["images"][0]["bytes"] == rows[3]["images"][0]["bytes"]
    assert not list((tmp_path / "rotation").glob(".*"))  # no part files left behind
    only = list(parquet.iter_config_rows(tmp_path, "rotation", "test", columns=["id"]))
    assert set(only[0]) == {"id"}


def test_shards_load_with_datasets_and_declared_features(tmp_path):
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (7, 5), (255, 0, 0)).save(png, format="PNG")
    rows = _rows(3)
    for row in rows:
        row["images"] = [{"bytes": png.getvalue(), "path": None}]
    parquet.write_split(rows, tmp_path / "rotation", "test", max_bytes=1 << 30)
    ds = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "rotation" / "test-*.parquet"), split="train"
    )
    assert ds.features == parquet.features()
    assert ds[0]["images"][0].size == (7, 5)
    assert ds["id"] == [r["id"] for r in rows]


def test_manifest_round_trip_and_checksum(tmp_path):
    data = {"counts": {"rotation": {"train": 1}}, "version": None}
    manifest_io.write_manifest(tmp_path, data)
    assert manifest_io.read_manifest(tmp_path) == data
    assert not list(tmp_path.glob("*.tmp"))
    path = tmp_path / "manifest.json"
    assert manifest_io.sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_tiny_ids_are_a_deterministic_subset():
    ids = [f"rotation-{k:04d}" for k in range(200)]
    picked = tiny_ids(ids, 50, seed=0)
    assert len(picked) == 50 and picked <= set(ids)
    assert picked == tiny_ids(reversed(ids), 50, seed=0)
    assert picked != tiny_ids(ids, 50, seed=1)
    assert tiny_ids(ids[:10], 50, seed=0) == set(ids[:10])


# ---------------------------------------------------------------------------- card


def test_card_metadata_lists_every_config_and_matches_the_shards(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    text = (data_dir / "README.md").read_text(encoding="utf-8")
    meta, _ = front_matter(text)
    assert meta == json.loads(json.dumps(card.card_metadata(manifest)))
    names = [c["config_name"] for c in meta["configs"]]
    assert names == [t for t in TASK_NAMES if t in manifest["counts"]] + [card.ALL_CONFIG]
    for config in meta["configs"][:-1]:
        for files in config["data_files"]:
            assert list(data_dir.glob(files["path"])), files
    info = {i["config_name"]: i for i in meta["dataset_info"]}
    for task, counts in manifest["counts"].items():
        got = {s["name"]: s["num_examples"] for s in info[task]["splits"]}
        assert got == {s: n for s, n in counts.items() if n}
    assert card.ordered_tasks({"counts": {"zooming": {}, "translation": {}, "extra": {}}}) == [
        "translation",
        "zooming",
        "extra",
    ]


def test_card_counts_and_baselines_tables(data_dir):
    manifest = manifest_io.read_manifest(data_dir)
    text = (data_dir / "README.md").read_text(encoding="utf-8")
    total = manifest["totals"]["questions"]
    counts = table_under(text, "Counts")
    assert counts[-1] == {
        "config": "**total**",
        **{split: str(total[split]) for split in ("train", "test", "tiny")},
    }
    assert {r["config"].strip("`"): int(r["test"]) for r in counts[:-1]} == {
        t: c["test"] for t, c in manifest["counts"].items()
    }
    table = card.baseline_table(data_dir, manifest)
    lines = table.splitlines()
    assert lines[0].startswith("| baseline |") and len(lines) >= 4
    assert table == card.baseline_table(data_dir, manifest)  # seeded: same figures every time


def test_card_and_blind_baselines_are_the_same_in_a_process_pool(data_dir):
    """The merge's pool measures the card's chance and text-only rows and the T5/T6 image rule's
    distances one shard file per job: same figures and answers as without a pool."""
    from misi_bench.builder.checks import blind, card_stats
    from misi_bench.builder.store.runner import JobRunner

    manifest = manifest_io.read_manifest(data_dir)
    tasks = card.ordered_tasks(manifest)
    alone = blind.compute_blind(data_dir, tasks, seed=3)
    assert alone["image_answers"]["test"] and alone["image_answers"]["train"]
    with JobRunner(2) as pool:
        pooled = blind.compute_blind(data_dir, tasks, seed=3, pool=pool)
        table = card.baseline_table(data_dir, manifest, pool=pool)
        scored = card_stats.card_scores(data_dir, tasks, alone["text_model"], 5, pool)
    assert pooled == alone
    assert table == card.baseline_table(data_dir, manifest)
    # the shard jobs give what scoring's one-pass functions give on all the rows at once
    from misi_bench.builder import scoring

    columns = ["id", "task", "answer", "metadata", "options"]
    rows = {
        s: [r for t in tasks for r in parquet.iter_config_rows(data_dir, t, s, columns)]
        for s in ("train", "test")
    }
    model = scoring.fit_text_only(rows["train"])
    assert alone["text_model"] == model
    for split in ("train", "test"):
        assert alone["splits"][split] == scoring.blind_baselines(
            rows[split], model, alone["image_answers"][split], 3
        )
    assert scored == card_stats.card_scores(data_dir, tasks, alone["text_model"], 5)
    # one entry per question of every task, in the dataset's order, for each kind
    ids = [
        r["id"]
        for t in tasks
        for s in ("train", "test")
        for r in parquet.iter_config_rows(data_dir, t, s, ["id"])
    ]
    assert len(scored["random"]) == len(scored["always_no"]) == len(ids)
    assert [t for t, _ in scored["random"]] == [
        t
        for t in tasks
        for s in ("train", "test")
        for _ in parquet.iter_config_rows(data_dir, t, s, ["id"])
    ]
    assert all(0.0 <= e["score"] <= 1.0 for _, e in scored["random"])
    # the random draws depend on the seed; the constant answer does not
    other = card_stats.card_scores(data_dir, tasks, alone["text_model"], 6)
    assert other["random"] != scored["random"] and other["always_no"] == scored["always_no"]
    assert len(scored["text_only"]) == sum(
        1
        for t in tasks
        if t in alone["text_model"]
        for s in ("train", "test")
        for _ in parquet.iter_config_rows(data_dir, t, s, ["id"])
    )


def test_row_groups_keep_a_complex_together_and_store_a_shared_view_once(tmp_path, complexes):
    """Rows of one complex share a row group (closed at a complex boundary after ROW_GROUP_ROWS
    rows), so the views its questions share are stored once: the shard is about the size of the
    distinct images, not of the references."""
    import pyarrow.parquet as pq
    from misi_bench.builder.operations.transforms import VIEW_NAMES
    from misi_bench.builder.scene.cache import render_png
    from misi_bench.builder.scene.camera import fit_camera
    from misi_bench.builder.scene.requests import RenderRequest

    rows = []
    for pdb, n in (("1hvr", parquet.ROW_GROUP_ROWS + 6), ("1a28", 5)):
        cx = complexes[pdb]
        camera = fit_camera(cx.screen_coords)
        views = [
            render_png(cx, RenderRequest(atoms=tuple(range(cx.n_atoms)), camera=camera, view=v))
            for v in VIEW_NAMES[:3]
        ]
        for k, row in enumerate(_rows(n)):
            row.update(id=f"rotation-{pdb}-{k:03d}", pdb_id=pdb)
            row["images"] = [{"bytes": png, "path": None} for png in views]
            row["image_views"] = list(VIEW_NAMES[:3])
            rows.append(row)
    (path,) = parquet.write_split(rows, tmp_path / "rotation", "test", max_bytes=1 << 30)
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [
        parquet.ROW_GROUP_ROWS + 6,
        5,
    ]
    distinct = {img["bytes"] for row in rows for img in row["images"]}
    references = sum(len(img["bytes"]) for row in rows for img in row["images"])
    assert path.stat().st_size < 1.2 * sum(map(len, distinct)) < 0.1 * references
    assert parquet.read_rows(path) == rows

"""The merge writes one shard file per job: any worker count gives the one-worker bytes, and the
planned shards are those of the sequential shard writer."""

from dataclasses import replace

from misi_bench.builder.dataset.build import build_dataset, plan, work_dir
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.dataset.merge import merge_units
from misi_bench.builder.store.parquet import SPLIT_ORDER, plan_shards, read_rows, write_split

LIMIT = 4
TASKS = ("rotation", "residue_ligand")


def test_plan_shards_follows_the_writers_rule():
    assert plan_shards([5, 5, 5, 20, 1, 1], 10) == [0, 0, 1, 2, 3, 3]
    assert plan_shards([], 10) == []


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".work" not in p.parts
    }


def test_merge_with_3_workers_is_byte_identical_to_1_worker(tmp_path):
    out = tmp_path / "b"
    build_dataset(
        source="samples", out=out, limit=LIMIT, tasks=list(TASKS), merge=False, progress=False
    )
    cfg = BuildConfig(source="samples", tasks=TASKS, limit=LIMIT)
    refs, splits = plan(cfg)
    work = work_dir(out, cfg)
    # small shards, so that splits hold several files and the planned boundaries matter
    small = replace(cfg, max_shard_bytes=1024 * 1024)
    results = {}
    for workers in (1, 3):
        target = tmp_path / f"w{workers}"
        manifest = merge_units(target, work, small, refs, splits, workers=workers)
        results[workers] = (manifest, _files(target))
    (m1, f1), (m3, f3) = results[1], results[3]
    assert m1 == m3
    assert f1 == f3
    assert "manifest.json" in f1
    names = sorted(n for n in f1 if n.endswith(".parquet"))
    assert {n.split("/")[0] for n in names} == set(TASKS)
    assert all(m1["counts"][t]["train"] > 0 for t in TASKS)
    multi = [n for n in names if "-00001-of-" in n]
    assert multi, names  # some split holds several shards
    # the planned shards are exactly those the sequential writer makes of the same rows
    task, split = multi[0].split("/")[0], multi[0].split("/")[1].split("-")[0]
    assert split in SPLIT_ORDER
    mine = [n for n in names if n.startswith(f"{task}/{split}-")]
    rows = [r for n in mine for r in read_rows(tmp_path / "w1" / n)]
    assert len(rows) == m1["counts"][task][split]
    again = write_split(rows, tmp_path / "seq", split, small.max_shard_bytes)
    assert [p.read_bytes() for p in again] == [f1[n] for n in mine]

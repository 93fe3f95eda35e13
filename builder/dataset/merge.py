"""Merge per-complex units into the final shards (with the deterministic ``tiny`` split), the
manifest and the dataset card."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import shutil
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq

from ..core.constants import BUILDER_VERSION
from .blind import write_blind
from .card import write_card
from .manifest import sha256_file, write_manifest
from .parquet import SPLIT_ORDER, ShardWriter, arrow_schema, read_rows


def tiny_ids(test_ids: Iterable[str], per_task: int, seed: int) -> set[str]:
    """``per_task`` question ids of one task drawn deterministically from its test ids."""
    ranked = sorted(test_ids, key=lambda i: hashlib.sha256(f"tiny:{seed}:{i}".encode()).hexdigest())
    return set(ranked[:per_task])


def tiny_stratum(row: dict) -> str | None:
    """The ``tiny_stratum`` a row's metadata names (``paper`` T4 rows: positive/negative)."""
    text = row.get("metadata")
    if not text or "tiny_stratum" not in text:
        return None
    return json.loads(text).get("tiny_stratum")


def tiny_ids_by_stratum(rows: Iterable[dict], per_task: int, seed: int) -> set[str]:
    """The tiny split of one task: ``per_task`` ids drawn from its test rows, or that many from
    each stratum when the rows name strata (the paper's tiny T4: 50 positives, 50 negatives)."""
    strata: dict[str | None, list[str]] = {}
    for row in rows:
        strata.setdefault(tiny_stratum(row), []).append(row["id"])
    return (
        set().union(*(tiny_ids(ids, per_task, seed) for ids in strata.values()))
        if strata
        else set()
    )


def _read_positions(path: Path, positions: list[int]) -> list[dict]:
    """The rows at ``positions`` of a unit file, reading only the row groups that hold them (a
    unit holds every config's rows of its complex, config by config: each config's merge reads
    its own rows, not the whole unit)."""
    source = pq.ParquetFile(path)
    sizes = [source.metadata.row_group(g).num_rows for g in range(source.num_row_groups)]
    starts = list(itertools.accumulate([0] + sizes[:-1]))
    group_of = {k: bisect.bisect_right(starts, k) - 1 for k in positions}
    groups = sorted(set(group_of.values()))
    first = dict(zip(groups, itertools.accumulate([0] + [sizes[g] for g in groups[:-1]])))
    rows = source.read_row_groups(groups).cast(arrow_schema()).to_pylist()
    return [rows[first[group_of[k]] + k - starts[group_of[k]]] for k in positions]


def _merge_task(job: tuple) -> tuple[str, dict[str, int], dict[str, dict]]:
    """Write one config's shards from the units: (task, rows per split, shard checksums)."""
    task, out, units, test_ids, positions, tiny_per_task, seed, max_shard_bytes = job
    out = Path(out)
    tiny = tiny_ids_by_stratum([r for rows in test_ids for r in rows], tiny_per_task, seed)
    writers = {s: ShardWriter(out / task, s, max_shard_bytes) for s in SPLIT_ORDER}
    for unit, where in zip(units, positions):
        if not where:
            continue
        for row in sorted(
            (r for r in _read_positions(Path(unit), where) if r["task"] == task),
            key=lambda r: r["id"],
        ):
            writers[row["split"]].add(row)
            if row["id"] in tiny:
                writers["tiny"].add({**row, "split": "tiny"})
    counts: dict[str, int] = {}
    shards: dict[str, dict] = {}
    for split, writer in writers.items():
        counts[split] = writer.count
        for path in writer.close():
            shards[str(path.relative_to(out))] = {
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
            }
    return task, counts, shards


def merge_units(
    out: Path, work: Path, cfg, refs: dict, splits: dict[str, str], workers: int = 1
) -> dict:
    """Merge per-complex units into the final shards, card and manifest; returns the manifest.

    Streams: one complex's rows are in memory at a time (plus one shard being filled), so the
    merge's memory does not grow with the dataset. Rows are ordered by complex (PDB id), then id.
    ``workers`` processes write the configs' shards (each config's files are independent, so the
    bytes do not depend on the count).
    """
    out = Path(out)
    statuses = [
        json.loads((work / f"{p}.status.json").read_text(encoding="utf-8")) for p in sorted(refs)
    ]
    units = [work / f"{s['pdb_id']}.parquet" for s in statuses if s["ok"]]
    # light first pass: ids, tasks and splits (and image counts) only
    index = [
        read_rows(u, columns=["id", "task", "split", "image_views", "metadata"]) for u in units
    ]
    for task in cfg.tasks:  # rebuild config folders from scratch
        shutil.rmtree(out / task, ignore_errors=True)
    shards: dict[str, dict] = {}
    counts: dict[str, dict[str, int]] = {}
    images = {t: {"train": 0, "test": 0} for t in cfg.tasks}
    for rows in index:
        for r in rows:
            images[r["task"]][r["split"]] += len(r["image_views"])
    jobs = [
        (
            task,
            out,
            [str(u) for u in units],
            [
                [
                    {"id": r["id"], "metadata": r["metadata"]}
                    for r in rows
                    if r["task"] == task and r["split"] == "test"
                ]
                for rows in index
            ],
            [[k for k, r in enumerate(rows) if r["task"] == task] for rows in index],
            cfg.tiny_per_task,
            cfg.seed,
            cfg.max_shard_bytes,
        )
        for task in cfg.tasks
    ]
    if workers <= 1 or len(jobs) <= 1:
        done = [_merge_task(job) for job in jobs]
    else:  # the configs' shards are independent files: one config per process
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            done = list(pool.map(_merge_task, jobs))
    for task, task_counts, task_shards in done:
        counts[task] = task_counts
        shards.update(task_shards)
    manifest = {
        "builder_version": BUILDER_VERSION,
        "profile": cfg.profile,
        "config": cfg.generation_fields(),
        "config_hash": cfg.config_hash,
        "source": cfg.source,
        "seed": cfg.seed,
        "inputs": {s["pdb_id"]: {"split": s["split"], "files": s["inputs"]} for s in statuses},
        "complexes": {
            "total": len(statuses),
            "train": sum(1 for s in statuses if s["ok"] and s["split"] == "train"),
            "test": sum(1 for s in statuses if s["ok"] and s["split"] == "test"),
        },
        "counts": counts,
        "images": images,
        "totals": {
            "questions": {s: sum(counts[t][s] for t in cfg.tasks) for s in SPLIT_ORDER},
            "images": {s: sum(images[t][s] for t in cfg.tasks) for s in ("train", "test")},
        },
        "shards": dict(sorted(shards.items())),
        "skipped_complexes": {s["pdb_id"]: s["error"] for s in statuses if not s["ok"]},
        "skipped_tasks": {
            s["pdb_id"]: s["skipped_tasks"] for s in statuses if s["ok"] and s["skipped_tasks"]
        },
        "version": None,
    }
    if (
        cfg.structures is not None
    ):  # where an ids: source's entries are (their checksums are under inputs)
        manifest["structures"] = str(Path(cfg.structures).expanduser().resolve())
    write_manifest(out, manifest)
    write_blind(out, cfg.tasks, cfg.seed)
    write_card(out, manifest)
    return manifest

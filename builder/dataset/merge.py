"""Merge per-complex units into the final shards (with the deterministic ``tiny`` split), the
manifest and the dataset card."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import pyarrow.parquet as pq

from ..checks.blind import write_blind
from ..core.constants import BUILDER_VERSION, PACKAGE_VERSION
from ..core.rows import parse_metadata
from ..scene.pillow_core import image_library_versions
from ..store.manifest import sha256_file, write_manifest
from ..store.parquet import (
    SPLIT_ORDER,
    arrow_schema,
    plan_shards,
    row_bytes_of_table,
    write_shard,
)
from ..store.progress import stage
from ..store.runner import JobRunner, run_jobs
from .card import write_card
from .question_baselines_file import MANIFEST_KEY, write_question_baselines


def tiny_ids(test_ids: Iterable[str], per_task: int, seed: int) -> set[str]:
    """``per_task`` question ids of one task drawn deterministically from its test ids."""
    ranked = sorted(test_ids, key=lambda i: hashlib.sha256(f"tiny:{seed}:{i}".encode()).hexdigest())
    return set(ranked[:per_task])


def tiny_stratum(row: dict) -> str | None:
    """The ``tiny_stratum`` a row's metadata names (``paper`` T4 rows: positive/negative)."""
    return parse_metadata(row["metadata"], row["task"]).tiny_stratum


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


def _unit_index(unit: str) -> list[dict]:
    """The light index of one unit: each row's id, task, split, image count, metadata and size
    (the shard writer's measure), without converting the images to Python objects."""
    table = pq.read_table(
        unit, columns=["id", "task", "split", "image_views", "metadata", "question", "images"]
    )
    sizes = row_bytes_of_table(table)
    rows = table.select(["id", "task", "split", "metadata"]).to_pylist()
    views = table.column("image_views").to_pylist()
    return [{**r, "images": len(v or ()), "bytes": b} for r, v, b in zip(rows, views, sizes)]


def _write_shard_job(job: tuple) -> tuple[str, dict]:
    """Write one planned shard file: (its path under ``out``, its checksum and size)."""
    out, task, split, index, total, units, entries = job
    out = Path(out)

    def rows():  # one unit's rows in memory at a time
        for unit, group in itertools.groupby(entries, key=lambda e: e[0]):
            read = _read_positions(Path(units[unit]), [k for _, k in group])
            yield from ({**r, "split": split} if split == "tiny" else r for r in read)

    path = write_shard(rows(), out / task, split, index, total)
    return str(path.relative_to(out)), {"sha256": sha256_file(path), "bytes": path.stat().st_size}


def _plan_task(task: str, index: list[list[dict]], tiny_per_task: int, seed: int) -> dict:
    """One config's rows per split in merge order (complex, then id), as (unit, position,
    size), plus the tiny split drawn from its test rows."""
    test = [r for rows in index for r in rows if r["task"] == task and r["split"] == "test"]
    tiny = tiny_ids_by_stratum(test, tiny_per_task, seed)
    streams: dict[str, list[tuple[int, int, int]]] = {s: [] for s in SPLIT_ORDER}
    for u, rows in enumerate(index):
        mine = sorted((r["id"], k) for k, r in enumerate(rows) if r["task"] == task)
        for row_id, k in mine:
            entry = (u, k, rows[k]["bytes"])
            streams[rows[k]["split"]].append(entry)
            if row_id in tiny:
                streams["tiny"].append(entry)
    return streams


def _unit_label(unit: str) -> str:
    return Path(unit).name


def _shard_label(job: tuple) -> str:
    _, task, split, index, total, _, _ = job
    return f"{task}/{split} shard {index + 1} of {total}"


def _write_shards(out: Path, units: list[Path], cfg, runner) -> tuple[dict, dict, dict]:
    """Index the units, plan every split's shards and write them (on ``runner``'s workers):
    (shard checksums, rows per config and split, images per config and split)."""
    # light first pass (one job per unit): ids, tasks, splits, image counts, row sizes
    index = run_jobs(
        runner, _unit_index, [str(u) for u in units], "merge: index", label=_unit_label
    )
    for task in cfg.tasks:  # rebuild config folders from scratch
        shutil.rmtree(out / task, ignore_errors=True)
    counts: dict[str, dict[str, int]] = {}
    images = {t: {"train": 0, "test": 0} for t in cfg.tasks}
    for rows in index:
        for r in rows:
            images[r["task"]][r["split"]] += r["images"]
    # the unit of parallel work is one output shard: the boundaries are planned here by the
    # sequential writer's rule, so the files do not depend on the worker count
    jobs = []
    names = [str(u) for u in units]
    for task in cfg.tasks:
        streams = _plan_task(task, index, cfg.tiny_per_task, cfg.seed)
        counts[task] = {s: len(streams[s]) for s in SPLIT_ORDER}
        for split in SPLIT_ORDER:
            stream = streams[split]
            where = plan_shards([b for _, _, b in stream], cfg.max_shard_bytes)
            total = where[-1] + 1 if where else 0
            for k, part in itertools.groupby(zip(where, stream), key=lambda e: e[0]):
                part = [entry for _, entry in part]
                entries = [(u, p) for u, p, _ in part]
                size = sum(b for _, _, b in part)
                jobs.append((size, (out, task, split, k, total, names, entries)))
    jobs.sort(key=lambda j: -j[0])  # largest shards first: the workers finish together
    done = run_jobs(
        runner, _write_shard_job, [job for _, job in jobs], "merge: shards", label=_shard_label
    )
    return dict(done), counts, images


def merge_units(
    out: Path,
    work: Path,
    cfg,
    refs: dict,
    splits: dict[str, str],
    workers: int = 1,
    split: dict | None = None,
) -> dict:
    """Merge per-complex units into the final shards, card and manifest; returns the manifest.

    Streams: one complex's rows are in memory at a time (plus one shard being filled), so the
    merge's memory does not grow with the dataset. Rows are ordered by complex (PDB id), then id.
    ``workers`` processes index the units, then write the shard files, one file per job: the
    shard boundaries are planned first by the sequential writer's rule (``plan_shards``), so the
    bytes do not depend on the count. ``split``: the identity split's record (the manifest's
    ``split``; ``identity_split.split_record``), None for a hash or split-file build.
    """
    out = Path(out)
    statuses = [
        json.loads((work / f"{p}.status.json").read_text(encoding="utf-8")) for p in sorted(refs)
    ]
    units = [work / f"{s['pdb_id']}.parquet" for s in statuses if s["ok"]]
    with JobRunner(workers if len(units) > 1 else 1) as runner:
        return _merge(out, cfg, statuses, units, runner, split)


def _merge(out: Path, cfg, statuses, units: list[Path], runner, split: dict | None) -> dict:
    """The shards, manifest, blind baselines and card of :func:`merge_units` (``runner``: the
    job runner of its workers)."""
    shards, counts, images = _write_shards(out, units, cfg, runner)
    manifest = {
        "misi_bench_version": PACKAGE_VERSION,
        "builder_version": BUILDER_VERSION,
        # the releases that fix the image bytes (Pillow draws, libdeflate of `deflate` encodes)
        "image_libraries": image_library_versions(),
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
        # per complex: what structure reading left out or relabelled (ReadReport.as_dict)
        "reading": {s["pdb_id"]: s["reading"] for s in statuses if s.get("reading")},
        # per complex: the facts the shared factors bin by (units.complex_facts)
        "complex_facts": {s["pdb_id"]: s["facts"] for s in statuses if s.get("facts")},
        "version": None,
    }
    if split is not None:
        manifest["split"] = split
    if (
        cfg.structures is not None
    ):  # where an ids: source's entries are (their checksums are under inputs)
        manifest["structures"] = str(Path(cfg.structures).expanduser().resolve())
    write_manifest(out, manifest)
    stage("merge: blind baselines (options only, text only)")
    blind = write_blind(out, cfg.tasks, cfg.seed, runner)
    stage("merge: per-question baselines (every blind rule on every question)")
    manifest[MANIFEST_KEY] = write_question_baselines(out, cfg.tasks, blind, runner)
    write_manifest(out, manifest)
    stage("merge: card (chance levels, pixel-only solver, examples)")
    write_card(out, manifest, pool=runner)
    return manifest

"""Merge per-complex units into the final shards (with the deterministic ``tiny`` split), the
manifest and the dataset card."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Iterable

from ..core.constants import BUILDER_VERSION
from .card import write_card
from .manifest import sha256_file, write_manifest
from .parquet import SPLIT_ORDER, ShardWriter, read_rows


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
    return set().union(*(tiny_ids(ids, per_task, seed) for ids in strata.values())) if strata else set()


def merge_units(out: Path, work: Path, cfg, refs: dict, splits: dict[str, str]) -> dict:
    """Merge per-complex units into the final shards, card and manifest; returns the manifest.

    Streams: one complex's rows are in memory at a time (plus one shard being filled), so the
    merge's memory does not grow with the dataset. Rows are ordered by complex (PDB id), then id.
    """
    out = Path(out)
    statuses = [json.loads((work / f"{p}.status.json").read_text(encoding="utf-8")) for p in sorted(refs)]
    units = [work / f"{s['pdb_id']}.parquet" for s in statuses if s["ok"]]
    # light first pass: ids, tasks and splits (and image counts) only
    index = [read_rows(u, columns=["id", "task", "split", "image_views", "metadata"]) for u in units]
    for task in cfg.tasks:  # rebuild config folders from scratch
        shutil.rmtree(out / task, ignore_errors=True)
    shards: dict[str, dict] = {}
    counts: dict[str, dict[str, int]] = {}
    images = {t: {"train": 0, "test": 0} for t in cfg.tasks}
    for rows in index:
        for r in rows:
            images[r["task"]][r["split"]] += len(r["image_views"])
    for task in cfg.tasks:
        tiny = tiny_ids_by_stratum([r for rows in index for r in rows if r["task"] == task and r["split"] == "test"],
                                   cfg.tiny_per_task, cfg.seed)
        writers = {s: ShardWriter(out / task, s, cfg.max_shard_bytes) for s in SPLIT_ORDER}
        for unit, rows in zip(units, index):
            if not any(r["task"] == task for r in rows):
                continue
            for row in sorted((r for r in read_rows(unit) if r["task"] == task), key=lambda r: r["id"]):
                writers[row["split"]].add(row)
                if row["id"] in tiny:
                    writers["tiny"].add({**row, "split": "tiny"})
        counts[task] = {}
        for split, writer in writers.items():
            counts[task][split] = writer.count
            for path in writer.close():
                shards[str(path.relative_to(out))] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    manifest = {
        "builder_version": BUILDER_VERSION,
        "profile": cfg.profile,
        "config": cfg.generation_fields(),
        "config_hash": cfg.config_hash,
        "source": cfg.source,
        "seed": cfg.seed,
        "inputs": {s["pdb_id"]: {"split": s["split"], "files": s["inputs"]} for s in statuses},
        "complexes": {"total": len(statuses), "train": sum(1 for s in statuses if s["ok"] and s["split"] == "train"),
                      "test": sum(1 for s in statuses if s["ok"] and s["split"] == "test")},
        "counts": counts,
        "images": images,
        "totals": {"questions": {s: sum(counts[t][s] for t in cfg.tasks) for s in SPLIT_ORDER},
                   "images": {s: sum(images[t][s] for t in cfg.tasks) for s in ("train", "test")}},
        "shards": dict(sorted(shards.items())),
        "skipped_complexes": {s["pdb_id"]: s["error"] for s in statuses if not s["ok"]},
        "skipped_tasks": {s["pdb_id"]: s["skipped_tasks"] for s in statuses if s["ok"] and s["skipped_tasks"]},
        "version": None,
    }
    if cfg.structures is not None:  # where an ids: source's entries are (their checksums are under inputs)
        manifest["structures"] = str(Path(cfg.structures).expanduser().resolve())
    write_manifest(out, manifest)
    write_card(out, manifest)
    return manifest

"""Parquet shards with declared features, the manifest, and the merge of per-complex units."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

SPLIT_ORDER = ("train", "test", "tiny")
ROW_GROUP_ROWS = 64


def features():
    """The one schema of every config, as ``datasets.Features`` (declared, not inferred)."""
    import datasets  # noqa: PLC0415

    return datasets.Features({
        "id": datasets.Value("string"),
        "task": datasets.Value("string"),
        "split": datasets.Value("string"),
        "pdb_id": datasets.Value("string"),
        "images": datasets.List(datasets.Image()),
        "image_views": datasets.List(datasets.Value("string")),
        "question": datasets.Value("string"),
        "options": datasets.List(datasets.Value("string")),
        "answer": datasets.Value("string"),
        "answer_format": datasets.Value("string"),
        "metadata": datasets.Value("string"),
    })


def arrow_schema() -> pa.Schema:
    """Arrow schema carrying the ``huggingface`` features metadata."""
    return features().arrow_schema


def write_rows(rows: list[dict], path: Path) -> None:
    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    pq.write_table(table, path, compression="zstd", row_group_size=ROW_GROUP_ROWS, write_statistics=False)


def write_rows_atomic(rows: list[dict], path: Path) -> None:
    path = Path(path)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    write_rows(rows, tmp)
    os.replace(tmp, path)


def read_rows(path: Path) -> list[dict]:
    return pq.read_table(path, schema=arrow_schema()).to_pylist()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _row_bytes(row: dict) -> int:
    return sum(len(img["bytes"] or b"") for img in row["images"]) + len(row["question"]) + 512


def write_split(rows: list[dict], folder: Path, split: str, max_bytes: int) -> list[Path]:
    """Write ``<folder>/<split>-NNNNN-of-NNNNN.parquet`` shards of at most ~max_bytes each."""
    folder.mkdir(parents=True, exist_ok=True)
    chunks: list[list[dict]] = [[]]
    size = 0
    for row in rows:
        b = _row_bytes(row)
        if chunks[-1] and size + b > max_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(row)
        size += b
    n = len(chunks)
    paths = []
    for k, chunk in enumerate(chunks):
        path = folder / f"{split}-{k:05d}-of-{n:05d}.parquet"
        write_rows_atomic(chunk, path)
        paths.append(path)
    return paths


def tiny_subset(test_rows: list[dict], per_task: int, seed: int) -> list[dict]:
    """``per_task`` questions of one task drawn deterministically from its test rows."""
    ranked = sorted(test_rows, key=lambda r: hashlib.sha256(f"tiny:{seed}:{r['id']}".encode()).hexdigest())
    chosen = sorted(ranked[:per_task], key=lambda r: r["id"])
    return [{**r, "split": "tiny"} for r in chosen]


def merge_units(out: Path, work: Path, cfg, refs: dict, splits: dict[str, str]) -> dict:
    """Merge per-complex units into the final shards, card and manifest; returns the manifest."""
    from .build import BUILDER_VERSION  # noqa: PLC0415

    out = Path(out)
    by_task: dict[str, dict[str, list[dict]]] = {t: {"train": [], "test": []} for t in cfg.tasks}
    statuses = []
    for pdb_id in sorted(refs):
        status = json.loads((work / f"{pdb_id}.status.json").read_text(encoding="utf-8"))
        statuses.append(status)
        if not status["ok"]:
            continue
        for row in read_rows(work / f"{pdb_id}.parquet"):
            by_task[row["task"]][row["split"]].append(row)
    for task in cfg.tasks:  # rebuild config folders from scratch
        shutil.rmtree(out / task, ignore_errors=True)
    shards: dict[str, dict] = {}
    counts: dict[str, dict[str, int]] = {}
    for task in cfg.tasks:
        per_split = dict(by_task[task])
        per_split["tiny"] = tiny_subset(per_split["test"], cfg.tiny_per_task, cfg.seed)
        counts[task] = {}
        for split in SPLIT_ORDER:
            rows = sorted(per_split[split], key=lambda r: r["id"])
            counts[task][split] = len(rows)
            if not rows:
                continue
            for path in write_split(rows, out / task, split, cfg.max_shard_bytes):
                shards[str(path.relative_to(out))] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    images = {t: {s: sum(len(r["images"]) for r in by_task[t][s]) for s in ("train", "test")} for t in cfg.tasks}
    manifest = {
        "builder_version": BUILDER_VERSION,
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
    write_manifest(out, manifest)
    from .card import write_card  # noqa: PLC0415

    write_card(out, manifest)
    return manifest


def write_manifest(out: Path, manifest: dict) -> None:
    path = Path(out) / "manifest.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))


def iter_config_rows(folder: Path, task: str, split: str) -> Iterable[dict]:
    """Rows of one config/split of a built folder, straight from its shards (no ``datasets``)."""
    for path in sorted((Path(folder) / task).glob(f"{split}-*.parquet")):
        yield from read_rows(path)



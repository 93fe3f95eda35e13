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
#: A row group is also closed once its rows hold this many bytes (images dominate), which bounds
#: the merge's memory whatever the task's image count.
ROW_GROUP_BYTES = 24 * 1024 * 1024


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


def read_rows(path: Path, columns: list[str] | None = None) -> list[dict]:
    if columns is None:
        return pq.read_table(path, schema=arrow_schema()).to_pylist()
    return pq.read_table(path, columns=columns).to_pylist()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _row_bytes(row: dict) -> int:
    return sum(len(img["bytes"] or b"") for img in row["images"]) + len(row["question"]) + 512


class ShardWriter:
    """Writes ``<folder>/<split>-NNNNN-of-NNNNN.parquet`` shards of at most ~max_bytes each from
    a stream of rows. Rows go to disk one row group (``ROW_GROUP_ROWS`` rows or ``ROW_GROUP_BYTES``)
    at a time, so memory stays at one row group whatever the shard or dataset size; names are
    fixed at ``close``."""

    def __init__(self, folder: Path, split: str, max_bytes: int):
        self.folder, self.split, self.max_bytes = Path(folder), split, max_bytes
        self.group: list[dict] = []
        self.group_bytes = 0
        self.size = 0
        self.parts: list[Path] = []
        self.writer: pq.ParquetWriter | None = None
        self.count = 0

    def add(self, row: dict) -> None:
        b = _row_bytes(row)
        if self.writer is not None and self.size + b > self.max_bytes:
            self._flush_group()
            self._close_part()
        self.group.append(row)
        self.group_bytes += b
        self.size += b
        self.count += 1
        if len(self.group) >= ROW_GROUP_ROWS or self.group_bytes >= ROW_GROUP_BYTES:
            self._flush_group()

    def _flush_group(self) -> None:
        if not self.group:
            return
        if self.writer is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            part = self.folder / f".{self.split}-part{len(self.parts):05d}.parquet"
            self.parts.append(part)
            self.writer = pq.ParquetWriter(part, arrow_schema(), compression="zstd", write_statistics=False)
        self.writer.write_table(pa.Table.from_pylist(self.group, schema=arrow_schema()), row_group_size=ROW_GROUP_ROWS)
        self.group = []
        self.group_bytes = 0

    def _close_part(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            self.size = 0

    def close(self) -> list[Path]:
        self._flush_group()
        self._close_part()
        n = len(self.parts)
        final = []
        for k, part in enumerate(self.parts):
            path = self.folder / f"{self.split}-{k:05d}-of-{n:05d}.parquet"
            os.replace(part, path)
            final.append(path)
        return final


def write_split(rows: Iterable[dict], folder: Path, split: str, max_bytes: int) -> list[Path]:
    """Write rows as ``<folder>/<split>-NNNNN-of-NNNNN.parquet`` shards of ~max_bytes each."""
    writer = ShardWriter(folder, split, max_bytes)
    for row in rows:
        writer.add(row)
    return writer.close()


def tiny_ids(test_ids: Iterable[str], per_task: int, seed: int) -> set[str]:
    """``per_task`` question ids of one task drawn deterministically from its test ids."""
    ranked = sorted(test_ids, key=lambda i: hashlib.sha256(f"tiny:{seed}:{i}".encode()).hexdigest())
    return set(ranked[:per_task])


def merge_units(out: Path, work: Path, cfg, refs: dict, splits: dict[str, str]) -> dict:
    """Merge per-complex units into the final shards, card and manifest; returns the manifest.

    Streams: one complex's rows are in memory at a time (plus one shard being filled), so the
    merge's memory does not grow with the dataset. Rows are ordered by complex (PDB id), then id.
    """
    from .build import BUILDER_VERSION  # noqa: PLC0415

    out = Path(out)
    statuses = [json.loads((work / f"{p}.status.json").read_text(encoding="utf-8")) for p in sorted(refs)]
    units = [work / f"{s['pdb_id']}.parquet" for s in statuses if s["ok"]]
    # light first pass: ids, tasks and splits (and image counts) only
    index = [read_rows(u, columns=["id", "task", "split", "image_views"]) for u in units]
    for task in cfg.tasks:  # rebuild config folders from scratch
        shutil.rmtree(out / task, ignore_errors=True)
    shards: dict[str, dict] = {}
    counts: dict[str, dict[str, int]] = {}
    images = {t: {"train": 0, "test": 0} for t in cfg.tasks}
    for rows in index:
        for r in rows:
            images[r["task"]][r["split"]] += len(r["image_views"])
    for task in cfg.tasks:
        tiny = tiny_ids([r["id"] for rows in index for r in rows if r["task"] == task and r["split"] == "test"],
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


def iter_config_rows(folder: Path, task: str, split: str, columns: list[str] | None = None) -> Iterable[dict]:
    """Rows of one config/split of a built folder, straight from its shards (no ``datasets``),
    one shard in memory at a time; ``columns`` limits what is read."""
    for path in sorted((Path(folder) / task).glob(f"{split}-*.parquet")):
        yield from read_rows(path, columns)



"""Parquet shards with declared features: the one schema (the columns of the row record,
``builder.core.rows``), writing shards in bounded memory, reading them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.atomic import write_atomic
from ..core.rows import COLUMNS
from ..core.shards import config_shards, shard_name

SPLIT_ORDER = ("train", "test", "tiny")
#: A row group is closed before the first row of a new complex once it holds this many rows, so
#: the rows of one complex share a row group (and, through the dictionary below, each view they
#: share is stored once) unless the byte bound splits them.
ROW_GROUP_ROWS = 64
#: A row group is also closed once its rows hold this many bytes (images dominate, counted once
#: per reference), which bounds the merge's and readers' memory whatever the task's image count.
ROW_GROUP_BYTES = 64 * 1024 * 1024
#: Dictionary page limit of published shards: above a row group's bytes, so a column chunk never
#: falls back from dictionary to plain encoding, and an image that several questions of the row
#: group show (shared views) is stored once in it (Parquet's default, 1 MB, falls back after
#: about a dozen images). Readers decode dictionary pages transparently; rows are unchanged.
DICTIONARY_PAGE_BYTES = 2 * ROW_GROUP_BYTES


def features():
    """The one schema of every config, as ``datasets.Features`` (declared, not inferred): the
    row record's columns (``builder.core.rows.COLUMNS``) with their ``datasets`` types."""
    import datasets  # noqa: PLC0415

    types = {
        "string": lambda: datasets.Value("string"),
        "strings": lambda: datasets.List(datasets.Value("string")),
        "images": lambda: datasets.List(datasets.Image()),
    }
    return datasets.Features({name: types[kind]() for name, kind in COLUMNS})


#: Each column kind of ``core.rows.COLUMNS`` as (Arrow type, its ``datasets`` feature JSON).
_STRING = {"dtype": "string", "_type": "Value"}
_KINDS = {
    "string": (pa.string(), _STRING),
    "strings": (pa.list_(pa.string()), {"feature": _STRING, "_type": "List"}),
    "images": (
        pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
        {"feature": {"_type": "Image"}, "_type": "List"},
    ),
}


@lru_cache(maxsize=1)
def arrow_schema() -> pa.Schema:
    """Arrow schema carrying the ``huggingface`` features metadata: :func:`features`' own
    ``arrow_schema``, written out here so that a build's processes do not import ``datasets``
    (about a second of CPU each) to write or read a shard (``tests/test_question_baselines.py``
    checks the two are equal)."""
    info = {"info": {"features": {name: _KINDS[kind][1] for name, kind in COLUMNS}}}
    return pa.schema(
        [pa.field(name, _KINDS[kind][0]) for name, kind in COLUMNS],
        metadata={"huggingface": json.dumps(info)},
    )


def write_rows(rows: list[dict], path: Path) -> None:
    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    pq.write_table(
        table, path, compression="zstd", row_group_size=ROW_GROUP_ROWS, write_statistics=False
    )


def write_rows_atomic(rows: list[dict], path: Path, hint: str = "") -> None:
    """Rows to one Parquet file, whole or not at all (a full disk: no torn file, one line
    naming it; :func:`..core.atomic.write_atomic`)."""
    write_atomic(path, lambda tmp: write_rows(rows, tmp), hint)


def read_rows(path: Path, columns: list[str] | None = None) -> list[dict]:
    if columns is None:
        return pq.read_table(path, schema=arrow_schema()).to_pylist()
    return pq.read_table(path, columns=columns).to_pylist()


def row_bytes(row: dict) -> int:
    """A row's size by the shard writer's measure: its image bytes (each reference), its
    question and a fixed 512 for the rest."""
    return sum(len(img["bytes"] or b"") for img in row["images"]) + len(row["question"]) + 512


def row_bytes_of_table(table: pa.Table) -> list[int]:
    """:func:`row_bytes` of every row of a table holding ``images`` and ``question``, computed
    in Arrow (no row is converted to Python objects)."""
    import numpy as np  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    images = table.column("images").combine_chunks()
    lengths = pc.fill_null(pc.binary_length(pc.struct_field(pc.list_flatten(images), "bytes")), 0)
    parents = pc.list_parent_indices(images).to_numpy(zero_copy_only=False)
    per_row = np.bincount(
        parents, weights=lengths.to_numpy(zero_copy_only=False), minlength=len(table)
    )
    text = pc.fill_null(pc.utf8_length(table.column("question")), 0).to_numpy(zero_copy_only=False)
    return [int(round(b)) + int(q) + 512 for b, q in zip(per_row, text)]


def plan_shards(sizes: Iterable[int], max_bytes: int) -> list[int]:
    """The shard index of each row of a stream of rows of ``sizes`` bytes, by the rule of
    :meth:`ShardWriter.add` (a shard is full when the next row would take it past ``max_bytes``),
    so shards can be written independently with the boundaries of one sequential writer."""
    shard, size, out = 0, 0, []
    for b in sizes:
        if size and size + b > max_bytes:
            shard, size = shard + 1, 0
        size += b
        out.append(shard)
    return out


class ShardWriter:
    """Writes ``<folder>/<split>-NNNNN-of-NNNNN.parquet`` shards of at most ~max_bytes each from
    a stream of rows. Rows go to disk one row group (whole complexes up to ``ROW_GROUP_ROWS``
    rows, at most ``ROW_GROUP_BYTES``) at a time, so memory stays at one row group whatever the
    shard or dataset size; names are fixed at ``close``."""

    def __init__(self, folder: Path, split: str, max_bytes: int):
        self.folder, self.split, self.max_bytes = Path(folder), split, max_bytes
        self.group: list[dict] = []
        self.group_bytes = 0
        self.size = 0
        self.parts: list[Path] = []
        self.writer: pq.ParquetWriter | None = None
        self.count = 0

    def add(self, row: dict) -> None:
        b = row_bytes(row)
        if self.size and self.size + b > self.max_bytes:  # this shard is full: start the next one
            self._flush_group()
            self._close_part()
        elif len(self.group) >= ROW_GROUP_ROWS and row.get("pdb_id") != self.group[-1].get(
            "pdb_id"
        ):  # a new complex after enough rows: close the group at the complex boundary
            self._flush_group()
        self.group.append(row)
        self.group_bytes += b
        self.size += b
        self.count += 1
        if self.group_bytes >= ROW_GROUP_BYTES:
            self._flush_group()

    def _flush_group(self) -> None:
        if not self.group:
            return
        if self.writer is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            part = self.folder / f".{self.split}-part{len(self.parts):05d}.parquet"
            self.parts.append(part)
            self.writer = pq.ParquetWriter(
                part,
                arrow_schema(),
                compression="zstd",
                write_statistics=False,
                dictionary_pagesize_limit=DICTIONARY_PAGE_BYTES,
            )
        self.writer.write_table(
            pa.Table.from_pylist(self.group, schema=arrow_schema()), row_group_size=len(self.group)
        )
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
            path = self.folder / shard_name(self.split, k, n)
            os.replace(part, path)
            final.append(path)
        return final


def write_shard(rows: Iterable[dict], folder: Path, split: str, index: int, total: int) -> Path:
    """Write ``<folder>/<split>-<index>-of-<total>.parquet`` holding exactly ``rows`` (at least
    one), with the row groups a :class:`ShardWriter` gives the same rows in one shard: a shard
    planned by :func:`plan_shards` comes out byte-identical to the sequential writer's."""
    writer = ShardWriter(folder, f"{split}-{index:05d}", max_bytes=2**62)
    for row in rows:
        writer.add(row)
    writer._flush_group()
    writer._close_part()
    if len(writer.parts) != 1:
        raise ValueError(f"shard {index} of {split} in {folder}: no rows to write")
    path = Path(folder) / shard_name(split, index, total)
    os.replace(writer.parts[0], path)
    return path


def write_split(rows: Iterable[dict], folder: Path, split: str, max_bytes: int) -> list[Path]:
    """Write rows as ``<folder>/<split>-NNNNN-of-NNNNN.parquet`` shards of ~max_bytes each."""
    writer = ShardWriter(folder, split, max_bytes)
    for row in rows:
        writer.add(row)
    return writer.close()


def iter_config_rows(
    folder: Path, task: str, split: str, columns: list[str] | None = None
) -> Iterable[dict]:
    """Rows of one config/split of a built folder, straight from its shards (no ``datasets``),
    one shard in memory at a time; ``columns`` limits what is read."""
    for path in config_shards(folder, task, split):
        yield from read_rows(path, columns)


def config_row_groups(
    folder: Path, task: str, split: str, columns: list[str]
) -> Iterable[tuple[Path, int, list[dict]]]:
    """``(shard file, row group, its rows)`` of one config/split, in order, reading only
    ``columns`` (a light index: no images unless asked)."""
    for path in config_shards(folder, task, split):
        shard = pq.ParquetFile(path)
        for group in range(shard.num_row_groups):
            yield path, group, shard.read_row_group(group, columns=columns).to_pylist()

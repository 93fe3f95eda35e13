"""Which rows the audit checks, and how a worker reads them.

The audit's main process reads only a light index of a config's split (each row's complex, row
group by row group) and hands out :class:`RowChunk` references: consecutive rows of one complex
within one row group, at most ``max_rows`` of them. Each worker reads its chunks' rows itself
(:func:`read_chunk`), so the pictures never pass through the main process: at the paper's size
that is about 3 GB of test-split images that were read, converted and pickled on one CPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa
import pyarrow.parquet as pq

from ..store.parquet import config_row_groups


@dataclass(frozen=True)
class RowChunk:
    """Rows ``positions`` (ascending) of row group ``group`` of the shard file ``path``."""

    path: str
    group: int
    positions: tuple[int, ...]


def select(items: Iterable, limit: int | None = None, sample: int | None = None) -> Iterable:
    """All of ``items``, the first ``limit``, or ``sample`` of them spread evenly (every
    ``len // sample``-th item)."""
    if sample is not None:
        every = list(items)
        step = max(1, len(every) // max(sample, 1))
        return every[::step][:sample]
    if limit is not None:
        return (item for _, item in zip(range(limit), items))
    return items


def plan_chunks(
    folder,
    task: str,
    split: str,
    limit: int | None = None,
    sample: int | None = None,
    max_rows: int = 16,
) -> Iterator[RowChunk]:
    """The chunks of a config's split, over the rows :func:`select` picks (all, the first
    ``limit`` or a ``sample``), as :func:`audit.select_rows` picks them."""
    index = (
        (str(path), group, position, row["pdb_id"])
        for path, group, rows in config_row_groups(folder, task, split, ["pdb_id"])
        for position, row in enumerate(rows)
    )
    key, positions = None, []
    for path, group, position, pdb_id in select(index, limit, sample):
        if positions and ((path, group, pdb_id) != key or len(positions) >= max_rows):
            yield RowChunk(key[0], key[1], tuple(positions))
            positions = []
        key = (path, group, pdb_id)
        positions.append(position)
    if positions:
        yield RowChunk(key[0], key[1], tuple(positions))


@lru_cache(maxsize=4)
def _shard(path: str) -> pq.ParquetFile:
    """A shard file a worker keeps open (its footer parsed once)."""
    return pq.ParquetFile(path)


@lru_cache(maxsize=1)
def _row_group(path: str, group: int) -> pa.Table:
    """The row group a worker read last (consecutive chunks of a row group often meet here)."""
    return _shard(path).read_row_group(group)


def read_chunk(chunk: RowChunk) -> list[dict]:
    """The rows of ``chunk`` (every column), as :func:`parquet.read_rows` gives them."""
    return _row_group(chunk.path, chunk.group).take(list(chunk.positions)).to_pylist()


def release() -> None:
    """Forget the open shard files and the last row group (at the end of an audit run, so a
    later run in the same process reads the files as they are then)."""
    _row_group.cache_clear()
    _shard.cache_clear()

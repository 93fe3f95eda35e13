"""Which rows the audit checks, and how a worker reads them.

The audit's main process reads only a light index of a config's split (each row's complex, row
group by row group) and hands out :class:`RowChunk` references: consecutive rows of one complex
within one row group, at most ``max_rows`` of them. Each worker reads its chunks' rows itself
(:func:`read_chunk`), so the pictures never pass through the main process: at the paper's size
that is about 3 GB of test-split images that were read, converted and pickled on one CPU.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from .parquet import config_shards

#: Shard files a worker keeps open (their footers parsed once).
_OPEN_FILES = 4
_FILES: OrderedDict[str, pq.ParquetFile] = OrderedDict()
#: The row group a worker read last (its table), keyed by (path, group).
_LAST_GROUP: dict = {}


@dataclass(frozen=True)
class RowChunk:
    """Rows ``positions`` (ascending) of row group ``group`` of the shard file ``path``."""

    path: str
    group: int
    positions: tuple[int, ...]


def _index(folder: Path, task: str, split: str) -> Iterator[tuple[str, int, int, str]]:
    """``(path, row group, position, pdb_id)`` of every row of a config's split, in order."""
    for path in config_shards(folder, task, split):
        shard = pq.ParquetFile(path)
        for group in range(shard.num_row_groups):
            ids = shard.read_row_group(group, columns=["pdb_id"]).column(0).to_pylist()
            for position, pdb_id in enumerate(ids):
                yield str(path), group, position, pdb_id


def plan_chunks(
    folder: Path,
    task: str,
    split: str,
    limit: int | None = None,
    sample: int | None = None,
    max_rows: int = 16,
) -> Iterator[RowChunk]:
    """The chunks of a config's split: every row, the first ``limit`` or ``sample`` rows spread
    evenly over them (every ``len // sample``-th row, as :func:`audit.select_rows`)."""
    entries = _index(Path(folder), task, split)
    if sample is not None:
        every = list(entries)
        step = max(1, len(every) // max(sample, 1))
        entries = iter(every[::step][:sample])
    elif limit is not None:
        entries = (e for _, e in zip(range(limit), entries))
    key, positions = None, []
    for path, group, position, pdb_id in entries:
        if positions and ((path, group, pdb_id) != key or len(positions) >= max_rows):
            yield RowChunk(key[0], key[1], tuple(positions))
            positions = []
        key = (path, group, pdb_id)
        positions.append(position)
    if positions:
        yield RowChunk(key[0], key[1], tuple(positions))


def read_chunk(chunk: RowChunk) -> list[dict]:
    """The rows of ``chunk`` (every column), as :func:`parquet.read_rows` gives them."""
    shard = _FILES.get(chunk.path)
    if shard is None:
        shard = _FILES[chunk.path] = pq.ParquetFile(chunk.path)
        while len(_FILES) > _OPEN_FILES:
            _FILES.popitem(last=False)
    _FILES.move_to_end(chunk.path)
    key = (chunk.path, chunk.group)
    if _LAST_GROUP.get("key") != key:  # consecutive chunks of a row group often meet here
        _LAST_GROUP.update(key=key, table=shard.read_row_group(chunk.group))
    return _LAST_GROUP["table"].take(list(chunk.positions)).to_pylist()


def release() -> None:
    """Forget the open shard files and the last row group (at the end of an audit run, so a
    later run in the same process reads the files as they are then)."""
    _FILES.clear()
    _LAST_GROUP.clear()

"""Where the rows come from: a local build folder or a Hub dataset repository, read as Parquet
shards of the published schema, one small record batch at a time (memory does not grow with the
dataset)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...builder.core import shards as shard_files
from ...builder.core.errors import InputError
from ...builder.core.registry import TASK_NAMES, canonical_task
from ...builder.core.shards import config_glob

log = logging.getLogger(__name__)

#: Columns of the published schema that an SFT example needs.
COLUMNS = ("id", "task", "images", "question", "answer")
#: Rows decoded at a time (a row holds up to 11 PNG images of ~100 kB at 512 px).
BATCH_ROWS = 16
SPLITS = ("train", "test", "tiny")


@dataclass(frozen=True)
class SourceRow:
    """One published row reduced to what a training example needs; ``images`` are the encoded
    image files (PNG for builds) in prompt order."""

    id: str
    task: str
    images: tuple[bytes, ...]
    question: str
    answer: str


def pick_configs(configs: Sequence[str] | None) -> tuple[str, ...]:
    """Config names in the paper's order (T1..T9); aliases accepted; default: every task."""
    if not configs:
        return TASK_NAMES
    try:
        wanted = {canonical_task(c) for c in configs}
    except ValueError as exc:
        raise InputError("--configs", str(exc)) from exc
    return tuple(t for t in TASK_NAMES if t in wanted)


def resolve_source(
    source: str,
    configs: Sequence[str],
    split: str,
    revision: str | None = None,
    endpoint: str | None = None,
) -> Path:
    """A local folder holding ``<config>/<split>-*.parquet``: ``source`` itself when it is a
    folder, else the Hub dataset repo ``source`` with only those shards fetched into the Hub cache
    (``endpoint``: another Hub server; default huggingface_hub's, i.e. ``$HF_ENDPOINT``)."""
    local = Path(os.path.expanduser(source))
    if local.is_dir():
        return local
    if source.startswith((".", "/", "~")) or source.count("/") != 1:
        raise InputError(source, "no such dataset folder (and not a Hub repo id like owner/name)")
    try:
        from huggingface_hub import snapshot_download  # noqa: PLC0415
    except ImportError as exc:
        raise InputError(
            source, "reading from the Hub needs huggingface_hub (pip install 'misi-bench[hub]')"
        ) from exc
    patterns = [config_glob(c, split) for c in configs] + ["manifest.json"]
    log.info("fetching %s (%s) shards of %s from the Hub", split, ", ".join(configs), source)
    try:
        return Path(
            snapshot_download(
                source,
                repo_type="dataset",
                revision=revision,
                allow_patterns=patterns,
                endpoint=endpoint,
            )
        )
    except Exception as exc:  # noqa: BLE001 (network, auth and offline errors all mean: not readable)
        raise InputError(source, f"cannot fetch the dataset from the Hub: {exc}") from exc


def config_shards(root: Path, configs: Sequence[str], split: str) -> list[Path]:
    """Shard paths in export order: configs in the given order, shards sorted by name. A config
    without shards for ``split`` is skipped with a log line; none at all is an error."""
    shards = []
    for config in configs:
        found = shard_files.checked_shards(root, config, split)
        if not found:
            log.info("%s: no %s shards in %s", config, split, root)
        shards += found
    if not shards:
        raise InputError(
            root,
            f"no {split} shards for configs {', '.join(configs)} (expected {config_glob('<config>', split)})",
        )
    return shards


def count_rows(shards: Sequence[Path]) -> int:
    """Total rows of the shards, from their footers (no data read)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    return sum(pq.ParquetFile(p).metadata.num_rows for p in shards)


def iter_rows(shards: Sequence[Path], batch_rows: int = BATCH_ROWS) -> Iterator[SourceRow]:
    """The shards' rows in file order, ``batch_rows`` decoded at a time."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    for path in shards:
        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:  # noqa: BLE001 (pyarrow raises several types for a bad file)
            raise InputError(path, f"not a readable Parquet shard: {exc}") from exc
        missing = [c for c in COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise InputError(
                path, f"not a MiSI-Bench shard: missing column(s) {', '.join(missing)}"
            )
        for batch in pf.iter_batches(batch_size=batch_rows, columns=list(COLUMNS)):
            for row in batch.to_pylist():
                yield _source_row(path, row)


def _source_row(path: Path, row: dict) -> SourceRow:
    images = []
    for k, image in enumerate(row["images"] or []):
        data = image.get("bytes") if isinstance(image, dict) else None
        if not data:
            raise InputError(path, f"row {row['id']}: image {k + 1} has no embedded bytes")
        images.append(data)
    return SourceRow(row["id"], row["task"], tuple(images), row["question"], row["answer"])


def shards_profile(shards: Sequence[Path]) -> str | None:
    """The build profile of the exported rows (``paper`` / ``explicit``, from the rows' metadata;
    see ``builder.core.profiles``), or None for shards without a metadata column or rows."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    from ...builder.core.profiles import profile_of_rows  # noqa: PLC0415

    rows = []
    for path in shards:
        pf = pq.ParquetFile(path)
        if "metadata" not in pf.schema_arrow.names or not pf.metadata.num_rows:
            continue
        batch = next(pf.iter_batches(batch_size=8, columns=["metadata"]))
        rows += [{"metadata": m} for m in batch.column(0).to_pylist()]
    return profile_of_rows(rows, "export source") if rows else None

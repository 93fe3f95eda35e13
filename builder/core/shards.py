"""Where a build's Parquet shards live: ``<config>/<split>-NNNNN-of-NNNNN.parquet``.

The one spelling of the shard file pattern: the writer names shards with :func:`shard_name`,
every reader (validator, card, harness adapters, exporters, the Hub upload) finds them with
:func:`config_shards`, :func:`split_glob`, :func:`config_glob` or :data:`SHARD_GLOB`.
Standard library only.
"""

from __future__ import annotations

from pathlib import Path

#: The shard files' suffix.
SHARD_SUFFIX = ".parquet"
#: Every shard file of a release, relative to its folder.
SHARD_GLOB = f"*/*-*-of-*{SHARD_SUFFIX}"


def shard_name(split: str, index: int, total: int) -> str:
    """The file name of shard ``index`` (0-based) of ``total`` of one split."""
    return f"{split}-{int(index):05d}-of-{int(total):05d}{SHARD_SUFFIX}"


def split_glob(split: str) -> str:
    """The shard files of one split inside a config folder (a glob pattern)."""
    return f"{split}-*{SHARD_SUFFIX}"


def config_glob(config: str, split: str) -> str:
    """The shard files of one config and split, relative to the build folder (a glob pattern, as
    the card's ``data_files`` and the Hub's ``allow_patterns`` take it; ``config`` may be ``*``)."""
    return f"{config}/{split_glob(split)}"


def shard_prefix(config: str, split: str) -> str:
    """What every shard path of one config and split (relative, ``/``-separated) starts with."""
    return f"{config}/{split}-"


def config_shards(folder: str | Path, config: str, split: str) -> list[Path]:
    """The shard files of one config and split of a build folder, in order."""
    return sorted((Path(folder) / config).glob(split_glob(split)))

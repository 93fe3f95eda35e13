"""Where a build's Parquet shards live: ``<config>/<split>-NNNNN-of-NNNNN.parquet``.

The one spelling of the shard file pattern: the writer names shards with :func:`shard_name`,
every reader (validator, card, harness adapters, exporters, the Hub upload) finds them with
:func:`config_shards`, :func:`split_glob`, :func:`config_glob` or :data:`SHARD_GLOB`.

The front-ends (``score``, ``eval``, ``serve-mock``, ``report --dataset``, the human app, the
harness loaders) read a build's shards through :func:`checked_shards` / :func:`check_folder`: a
shard whose sha256 or size differs from the build's ``manifest.json`` (or that it does not list)
is refused in one line naming the file (:class:`~.errors.ShardMismatch`). Each file is hashed
once per process and (path, size, mtime): a second read of an unchanged file costs one ``stat``.
A folder without ``manifest.json`` (shards written by hand) is read unchecked.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from .errors import MisiError, ShardMismatch

#: The splits of a build, in order.
SPLITS = ("train", "test", "tiny")

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


#: sha256 of files already hashed: (resolved path, size, mtime_ns) -> hex digest.
_DIGESTS: dict[tuple[str, int, int], str] = {}
_LOCK = threading.Lock()


def _digest(path: Path) -> tuple[int, str]:
    """``(size, sha256)`` of ``path``, hashed once per (path, size, mtime) in this process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _LOCK:
        known = _DIGESTS.get(key)
    if known is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        known = h.hexdigest()
        with _LOCK:
            _DIGESTS[key] = known
    return st.st_size, known


def _listing(folder: Path) -> dict | None:
    """``manifest.json``'s ``shards`` of ``folder`` (None when there is no manifest)."""
    path = folder / "manifest.json"
    if not path.is_file():
        return None
    try:
        shards = json.loads(path.read_text(encoding="utf-8")).get("shards")
    except (OSError, ValueError, AttributeError) as exc:
        raise ShardMismatch(f"{path}: cannot be read as a build's manifest ({exc})") from None
    return shards if isinstance(shards, dict) else {}


def check_shards(folder: str | Path, paths: list[Path]) -> list[Path]:
    """``paths`` (shard files of ``folder``) when each is the one ``folder/manifest.json``
    records (size and sha256); else :class:`ShardMismatch` naming the first that is not."""
    folder = Path(folder)
    listed = _listing(folder)
    if listed is None:
        return paths
    for path in paths:
        rel = Path(path).relative_to(folder).as_posix()
        meta = listed.get(rel)
        if not isinstance(meta, dict):
            raise ShardMismatch(
                f"{path}: not listed in {folder / 'manifest.json'} (a shard of another build?); "
                "remove it or rebuild the folder"
            )
        size, digest = _digest(Path(path))
        if size != meta.get("bytes", size) or digest != meta.get("sha256"):
            raise ShardMismatch(
                f"{path}: sha256 differs from {folder / 'manifest.json'} (the file changed after "
                "its build); refusing to read it: rebuild the folder or download it again"
            )
    return paths


def checked_shards(folder: str | Path, config: str, split: str) -> list[Path]:
    """:func:`config_shards`, each checked against the build's manifest (:func:`check_shards`)."""
    return check_shards(folder, config_shards(folder, config, split))


def check_folder(folder: str | Path) -> None:
    """Check every shard file of ``folder`` (:data:`SHARD_GLOB`) against its manifest."""
    folder = Path(folder)
    paths = sorted(
        p for p in folder.glob(SHARD_GLOB) if not p.relative_to(folder).as_posix().startswith(".")
    )
    check_shards(folder, paths)


def check_split(split: str, allowed: tuple[str, ...] = SPLITS, flag: str = "--split") -> str:
    """``split`` when it is one of ``allowed``; else one line listing them (with a did-you-mean)."""
    if split in allowed:
        return split
    import difflib  # noqa: PLC0415

    close = difflib.get_close_matches(str(split), allowed, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]}? " if close else ""
    raise MisiError(
        f"{flag} {str(split)[:40]!r}: no such split; {hint}the splits are {', '.join(allowed)}"
    )

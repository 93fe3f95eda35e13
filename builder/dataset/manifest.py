"""The build manifest (``manifest.json``) and file checksums."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_manifest(out: Path, manifest: dict) -> None:
    path = Path(out) / "manifest.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))


#: Shard files of a release, relative to its folder (``<config>/<split>-NNNNN-of-NNNNN.parquet``).
SHARD_GLOB = "*/*-*-of-*.parquet"


def shard_problems(folder: Path, manifest: dict) -> list[str]:
    """Where the shard files of ``folder`` differ from ``manifest["shards"]``: a listed shard that
    is missing or whose sha256 (or size) differs, and a shard file the manifest does not list
    (e.g. left by another build). Empty when every byte is the manifest's."""
    folder = Path(folder)
    listed = manifest.get("shards")
    if not isinstance(listed, dict):  # (a build whose every complex was skipped lists none)
        return [f"{folder / 'manifest.json'}: has no shard list with their sha256"]
    problems = []
    for rel, meta in sorted(listed.items()):
        path = folder / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in manifest.json but missing")
        elif path.stat().st_size != meta.get("bytes", path.stat().st_size) or sha256_file(
            path
        ) != meta.get("sha256"):
            problems.append(
                f"{rel}: sha256 differs from manifest.json (the file changed after its build)"
            )
    on_disk = {
        p.relative_to(folder).as_posix()
        for p in folder.glob(SHARD_GLOB)
        if not p.relative_to(folder).as_posix().startswith(".")
    }
    problems += [f"{rel}: not listed in manifest.json" for rel in sorted(on_disk - set(listed))]
    return problems

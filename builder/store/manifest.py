"""The build manifest (``manifest.json``) and file checksums."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..core.shards import SHARD_GLOB


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


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _verdict_problems(name: str, value) -> list[str]:
    """``validation`` / ``audit``: an object whose ``ok`` is true or false (not a string)."""
    if not isinstance(value, dict):
        return [f"{name!r} is {type(value).__name__} {value!r:.40}, not an object"]
    out = []
    if not isinstance(value.get("ok"), bool):
        out.append(f"{name}.ok is {value.get('ok')!r:.40}, not true or false")
    if "checked" in value and not _is_int(value["checked"]):
        out.append(f"{name}.checked is {value['checked']!r:.40}, not a count")
    if "problems" in value and not isinstance(value["problems"], list):
        out.append(f"{name}.problems is not a list")
    return out


def manifest_problems(manifest) -> list[str]:
    """Where ``manifest`` is not shaped like a build's manifest (what ``push`` refuses): an
    object with a text ``config_hash``, ``counts`` of {config: {split: count}}, ``shards`` of
    {path: {sha256, bytes}}, and, when present, ``validation`` / ``audit`` objects whose ``ok``
    is true or false and ``skipped_complexes`` of {pdb id: reason}. Empty when it is."""
    if not isinstance(manifest, dict):
        return [f"the manifest is {type(manifest).__name__}, not an object"]
    out = []
    if not isinstance(manifest.get("config_hash"), str) or not manifest.get("config_hash"):
        out.append(f"config_hash is {manifest.get('config_hash')!r:.40}, not a hash")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or not all(
        isinstance(c, dict) and all(_is_int(n) and n >= 0 for n in c.values())
        for c in counts.values()
    ):
        out.append("counts is not {config: {split: count}}")
    shards = manifest.get("shards")
    if not isinstance(shards, dict) or not all(
        isinstance(m, dict) and isinstance(m.get("sha256"), str) and _is_int(m.get("bytes"))
        for m in shards.values()
    ):
        out.append("shards is not {path: {sha256, bytes}}")
    for name in ("validation", "audit"):
        if name in manifest:
            out += _verdict_problems(name, manifest[name])
    skipped = manifest.get("skipped_complexes", {})
    if not isinstance(skipped, dict) or not all(isinstance(v, str) for v in skipped.values()):
        out.append("skipped_complexes is not {pdb id: reason}")
    if not isinstance(manifest.get("version"), (str, type(None))):
        out.append(f"version is {manifest.get('version')!r:.40}, not a tag or null")
    return out

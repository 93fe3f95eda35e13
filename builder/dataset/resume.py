"""When a finished unit of ``<out>/.work/`` may be reused: the build's cache is keyed by content.

The work folder is named by the configuration's hash; within it, a unit's status file records the
sha256 of each input file of its complex, the key of its split and T5 partner list, and a digest
of the files of every other complex it read (``units``). A rerun reuses the unit only while all of
them hold now, and logs why it redoes one that may not be reused.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..core.records import ComplexRef
from ..store.sources import file_checksums
from .units import MISSING_STRUCTURE, files_digest, unit_key

log = logging.getLogger(__name__)


class Checksums:
    """sha256 of the input files of complexes, each complex hashed once per build."""

    def __init__(self, refs: dict[str, ComplexRef]):
        self.refs, self.memo = refs, {}

    def files(self, pdb_id: str) -> dict | None:
        """{file name: sha256}, or None when the files cannot be read now."""
        if pdb_id not in self.memo:
            try:
                self.memo[pdb_id] = file_checksums(self.refs[pdb_id])
            except OSError:
                self.memo[pdb_id] = None
        return self.memo[pdb_id]


def reuse_problem(
    status: dict, ref: ComplexRef, splits: dict[str, str], sums: Checksums
) -> str | None:
    """Why the finished unit ``status`` of ``ref`` may not be reused (None: it may). A unit is
    reused only when its input files have the same sha256 as then, its split and T5 partner list
    are the same (``unit_key``) and every other complex it read has the same files."""
    if status.get("key") != unit_key(ref.pdb_id, splits):
        return (
            "its split or partner list changed" if status.get("key") else "no content key recorded"
        )
    if ref.kind == "raw" and ref.path.exists() and MISSING_STRUCTURE in status.get("error", ""):
        return "its structure file is present now"
    if not (ref.kind == "raw" and not ref.path.exists()):
        now = sums.files(ref.pdb_id)
        before = status.get("inputs") or {}
        if (now or {}) != before:
            changed = sorted(
                n for n in set(before) | set(now or {}) if before.get(n) != (now or {}).get(n)
            )
            return f"input file(s) changed: {', '.join(changed[:5]) or 'unreadable now'}"
    for other, digest in sorted((status.get("read") or {}).items()):
        files = sums.files(other) if other in sums.refs else None
        if files is None or files_digest(files) != digest:
            return f"the files of {other}, which it read, changed"
    return None


def finished(work: Path, ref: ComplexRef, splits: dict[str, str], sums: Checksums) -> bool:
    """A unit is done when its status file exists and :func:`reuse_problem` finds nothing; a unit
    that may not be reused is logged with the reason and redone."""
    status_path = work / f"{ref.pdb_id}.status.json"
    if not status_path.exists():
        return False
    try:
        status = json.loads(status_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log.info("rebuilding %s: its status file is unreadable", ref.pdb_id)
        return False
    problem = reuse_problem(status, ref, splits, sums)
    if problem:
        log.info("rebuilding %s: %s since its unit was built", ref.pdb_id, problem)
        return False
    return True


def stale_units(work: Path, refs: dict[str, ComplexRef], splits: dict[str, str]) -> dict[str, str]:
    """{pdb id: why} of the finished units of ``work`` that may not be reused now (what a merge of
    units built elsewhere, e.g. by cluster shards, must refuse)."""
    sums, stale = Checksums(refs), {}
    for pdb_id in sorted(refs):
        path = work / f"{pdb_id}.status.json"
        if not path.exists():
            continue
        try:
            status = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stale[pdb_id] = "its status file is unreadable"
            continue
        problem = reuse_problem(status, refs[pdb_id], splits, sums)
        if problem:
            stale[pdb_id] = problem
    return stale


def skipped_units(work: Path, refs: dict[str, ComplexRef], sums: Checksums) -> dict[str, str]:
    """{pdb id: why} of the units of ``work`` recorded as skipped (the complex could not be read)
    whose input files are still those they were tried on, and those discovery already refused
    (``ComplexRef.problem``): what the split is drawn around."""
    out = {}
    for pdb_id in sorted(refs):
        if refs[pdb_id].problem:
            out[pdb_id] = refs[pdb_id].problem
            continue
        path = work / f"{pdb_id}.status.json"
        try:
            status = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        except (OSError, ValueError):
            status = None
        if not isinstance(status, dict) or status.get("ok", True):
            continue
        if (status.get("inputs") or {}) == (sums.files(pdb_id) or {}):
            out[pdb_id] = str(status.get("error", ""))
    return out

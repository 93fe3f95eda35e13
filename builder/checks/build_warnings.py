"""Validity warnings of a finished build: what makes some of its scores mean less than they seem.

Three kinds, read from the build folder (``baselines.json``) and its manifest (the build's audit
and reading records):

* **options only above chance**: a rule that reads a choice question's options alone (never the
  pictures) scores above chance, its 95% interval clear of 25% (the paper's decoys leak the
  answer on T8; ``docs/decoys.md``);
* **rotamer-dependent answers**: sampled H-bond answers (T4, T8, T9) that change when a modelled
  rotatable hydrogen is turned to its best rotamer (the audit's ``rotamers`` check);
* **atoms lost in reading**: complexes whose reading left out heavy atoms that were not
  alternate locations, waters, other models or non-standard residues (``ReadReport.lost_atoms``:
  atoms under a name their residue already has, outside the pocket; ``validate`` repeats these).

``build_dataset`` logs each as a WARNING line; ``misi-bench build`` repeats them in its
end-of-run summary.
"""

from __future__ import annotations

import logging
from pathlib import Path

from . import blind

log = logging.getLogger(__name__)


def options_only_warnings(out: Path) -> list[str]:
    """One line per choice task whose best options-only rule beats chance (interval clear of it)."""
    data = blind.read_blind(Path(out))
    if not data:
        return []
    chance = data.get("chance", blind.CHANCE)
    lines = []
    for task, worst in blind.options_only_gate(data)["worst"].items():
        if blind.chance_excess(worst, chance) <= 0:
            continue
        low, high = worst["ci95"]
        lines.append(
            f"{task}: options-only rule {worst['rule']} scores {100 * worst['score']:.1f}% "
            f"(95% interval {100 * low:.1f}-{100 * high:.1f}%, {worst['split']}) vs chance "
            f"{100 * chance:.0f}%: the options alone point to the answer; compare models with "
            "this row (card) or build with --decoys balanced"
        )
    return lines


def rotamer_warnings(manifest: dict) -> list[str]:
    """One line per task of the build's audit with answers that depend on a modelled rotamer."""
    lines = []
    for task, found in (manifest.get("audit") or {}).get("tasks", {}).items():
        ids = found.get("rotamer_dependent") or []
        if ids:
            lines.append(
                f"{task}: {len(ids)}/{found['hbond_answers']} sampled H-bond answers depend on "
                f"a modelled rotatable hydrogen ({', '.join(ids[:5])}"
                f"{' ...' if len(ids) > 5 else ''}); misi-bench audit --configs {task} lists all"
            )
    return lines


def reading_warnings(manifest: dict) -> list[str]:
    """One line per complex of the manifest whose reading lost atoms (``lost_atoms``)."""
    reading = manifest.get("reading") or {}
    lines = []
    for pdb_id, record in sorted(reading.items()) if isinstance(reading, dict) else ():
        lost = record.get("lost_atoms", 0) if isinstance(record, dict) else 0
        if lost:
            lines.append(
                f"{pdb_id}: {lost} heavy atoms named like another atom of their residue (an "
                "unflagged alternate location, or two residues under one id) were left out in "
                "reading, outside the pocket; see the manifest's reading record"
            )
    return lines


def validity_warnings(out: Path, manifest: dict) -> list[str]:
    """Every validity warning of a finished build (options only, rotamers, reading losses)."""
    return options_only_warnings(out) + rotamer_warnings(manifest) + reading_warnings(manifest)


def log_validity_warnings(out: Path, manifest: dict) -> list[str]:
    """Log :func:`validity_warnings` as WARNING lines; returns them."""
    lines = validity_warnings(out, manifest)
    for line in lines:
        log.warning("validity: %s", line)
    return lines

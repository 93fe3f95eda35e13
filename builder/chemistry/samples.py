"""The embedded sample set: real protein-ligand complexes that ship with the package.

``builder/data/samples/<pdbid>/`` holds PDBbind-layout files (``_pocket.pdb``, ``_ligand.sdf``,
``_ligand.mol2``) listed in ``index.csv``, rebuilt from the package registries by
``python -m scripts.make_samples`` (provenance in ``builder/data/samples/PROVENANCE.md``; PDB
coordinates are CC0). The test fixtures (raw entries, held-out sets) live outside the package,
in a checkout's ``tests/data`` (``scripts/fixtures.py``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..core.records import ComplexRef

__all__ = [
    "data_root",
    "sample_root",
    "sample_index",
    "sample_refs",
]


def data_root() -> Path:
    """The package's ``data`` folder (works from a checkout and from an installed wheel)."""
    return Path(__file__).resolve().parent.parent / "data"


def sample_root() -> Path:
    """Folder holding one ``<pdbid>/`` directory per embedded sample complex."""
    return data_root() / "samples"


def _read_index(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [dict(row) for row in csv.DictReader(fh)]


def _opt_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text else None


def sample_index() -> list[dict[str, str]]:
    """Rows of ``samples/index.csv`` (pdb_id, ligand_code, ligand_chain, ligand_resnum, ...)."""
    return _read_index(sample_root() / "index.csv")


def sample_refs() -> list[ComplexRef]:
    """One ``ComplexRef`` (kind ``pdbbind``) per embedded sample, in index order. ``pdb_id`` is
    lower case, like the sample's directory name (the index keeps the PDB's upper case)."""
    root = sample_root()
    refs = []
    for row in sample_index():
        pdb_id = row["pdb_id"].strip().lower()
        refs.append(
            ComplexRef(
                pdb_id=pdb_id,
                path=root / pdb_id,
                kind="pdbbind",
                ligand_code=row.get("ligand_code") or None,
                ligand_chain=row.get("ligand_chain") or None,
                ligand_resnum=_opt_int(row.get("ligand_resnum")),
            )
        )
    return refs

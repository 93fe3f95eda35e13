"""The embedded sample set: real protein-ligand complexes that ship with the package.

``builder/data/samples/<pdbid>/`` holds PDBbind-layout files (``_pocket.pdb``, ``_ligand.sdf``,
``_ligand.mol2``) listed in ``index.csv``; ``builder/data/raw/`` holds three unmodified PDB /
mmCIF entries (gzipped) listed in its own ``index.csv``. Both are rebuilt from the package
registries by ``python -m scripts.make_samples`` (provenance in
``builder/data/samples/PROVENANCE.md``; PDB coordinates are CC0).
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..core.records import ComplexRef

__all__ = [
    "data_root",
    "sample_root",
    "raw_root",
    "sample_index",
    "raw_index",
    "sample_refs",
    "raw_refs",
]


def data_root() -> Path:
    """The package's ``data`` folder (works from a checkout and from an installed wheel)."""
    return Path(__file__).resolve().parent.parent / "data"


def sample_root() -> Path:
    """Folder holding one ``<pdbid>/`` directory per embedded sample complex."""
    return data_root() / "samples"


def raw_root() -> Path:
    """Folder holding the raw (unprocessed, gzipped) PDB/mmCIF entries."""
    return data_root() / "raw"


def _read_index(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [dict(row) for row in csv.DictReader(fh)]


def _opt_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text else None


def sample_index() -> list[dict[str, str]]:
    """Rows of ``samples/index.csv`` (pdb_id, ligand_code, ligand_chain, ligand_resnum, ...)."""
    return _read_index(sample_root() / "index.csv")


def raw_index() -> list[dict[str, str]]:
    """Rows of ``raw/index.csv`` (pdb_id, file, ligand_code, ligand_chain, ligand_resnum, ...)."""
    return _read_index(raw_root() / "index.csv")


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


def raw_refs() -> list[ComplexRef]:
    """One ``ComplexRef`` (kind ``raw``) per raw entry; chain/number are None where the index
    leaves them blank (the reader then takes the first copy). A blank chain in a legacy PDB
    file is written as an empty index field too, so it also reads as None here."""
    root = raw_root()
    refs = []
    for row in raw_index():
        refs.append(
            ComplexRef(
                pdb_id=row["pdb_id"].strip().lower(),
                path=root / row["file"].strip(),
                kind="raw",
                ligand_code=row["ligand_code"].strip(),
                ligand_chain=row.get("ligand_chain") or None,
                ligand_resnum=_opt_int(row.get("ligand_resnum")),
            )
        )
    return refs

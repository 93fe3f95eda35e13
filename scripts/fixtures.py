"""Test fixtures of a checkout (outside the wheel): ``tests/data/``.

``raw/`` holds three unmodified PDB / mmCIF entries (gzipped) listed in its ``index.csv``;
``heldout/`` and ``copies/`` hold held-out PDBbind-layout complexes (never used to tune the
generator; provenance in each folder's ``PROVENANCE.md``). All three are rebuilt by
``python -m scripts.make_samples``. The embedded samples the package ships stay in
``builder/data/samples`` (``builder.chemistry.samples``).
"""

from __future__ import annotations

import csv
from pathlib import Path

from misi_bench.builder.chemistry.samples import sample_root
from misi_bench.builder.core.records import ComplexRef

#: The checkout's test-data folder.
FIXTURE_ROOT = Path(__file__).resolve().parents[1] / "tests" / "data"


def fixture_root(name: str) -> Path:
    """One complex set's folder: ``samples`` (the package's embedded samples), ``raw``,
    ``heldout``, ``copies`` under :data:`FIXTURE_ROOT`; a longer path (``heldout/raw``,
    ``samples/1a28``) names a folder inside one."""
    head, _, rest = name.partition("/")
    root = sample_root() if head == "samples" else FIXTURE_ROOT / head
    return root / rest if rest else root


def raw_root() -> Path:
    """Folder holding the raw (unprocessed, gzipped) PDB/mmCIF entries."""
    return fixture_root("raw")


def raw_index() -> list[dict[str, str]]:
    """Rows of ``raw/index.csv`` (pdb_id, file, ligand_code, ligand_chain, ligand_resnum, ...)."""
    with open(raw_root() / "index.csv", newline="", encoding="utf-8") as fh:
        return [dict(row) for row in csv.DictReader(fh)]


def _opt_int(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(text) if text else None


def raw_refs() -> list[ComplexRef]:
    """One ``ComplexRef`` (kind ``raw``) per raw entry; chain/number are None where the index
    leaves them blank (the reader then takes the first copy). A blank chain in a legacy PDB
    file is written as an empty index field too, so it also reads as None here."""
    root = raw_root()
    return [
        ComplexRef(
            pdb_id=row["pdb_id"].strip().lower(),
            path=root / row["file"].strip(),
            kind="raw",
            ligand_code=row["ligand_code"].strip(),
            ligand_chain=row.get("ligand_chain") or None,
            ligand_resnum=_opt_int(row.get("ligand_resnum")),
        )
        for row in raw_index()
    ]

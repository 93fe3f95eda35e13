"""Build source ``ids:LIST.csv``: PDB ids and ligand codes, with the structures in a local folder.

The list is a CSV with one complex per row: ``pdb_id, ligand`` (the ligand's residue name, a CCD
code) and optionally ``chain, resnum`` to pick one copy of the ligand (default: the first copy by
chain and residue number, as the raw-entry reader does). A header row is optional; ``#`` starts a
comment line. Each entry's structure is looked up in the structures folder as ``<id>.cif.gz``,
``<id>.cif``, ``<id>.pdb.gz``, ``<id>.pdb`` or ``<id>.ent.gz`` (any letter case), in that order;
``misi-bench build --fetch`` downloads the missing ones first (see :mod:`.archive`).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.records import ComplexRef

ID_SOURCE_PREFIX = "ids:"
#: Where structures are cached when ``--structures`` is not given ($MISI_BENCH_STRUCTURES wins).
STRUCTURES_ENV = "MISI_BENCH_STRUCTURES"
STRUCTURE_SUFFIXES = (".cif.gz", ".cif", ".pdb.gz", ".pdb", ".ent.gz")
_PDB_ID = re.compile(r"^[0-9][a-z0-9]{3}$")
_CCD = re.compile(r"^[A-Z0-9]{1,5}$")


@dataclass(frozen=True)
class IdRow:
    """One row of an id list: PDB id (lower case), ligand CCD code (upper case), optional copy."""

    pdb_id: str
    ligand: str
    chain: str | None = None
    resnum: int | None = None


def is_id_source(source: object) -> bool:
    return str(source).startswith(ID_SOURCE_PREFIX)


def id_list_path(source: str) -> Path:
    return Path(str(source)[len(ID_SOURCE_PREFIX) :]).expanduser()


def default_structures_dir() -> Path:
    """``$MISI_BENCH_STRUCTURES`` or ``~/.cache/misi-bench/pdb``: shared by every build."""
    env = os.environ.get(STRUCTURES_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "misi-bench" / "pdb"


def read_id_list(path: str | Path) -> list[IdRow]:
    """Rows of an id list; a bad row raises ``InputError`` naming the file and the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(path, f"cannot read id list ({exc.strerror or exc})") from None
    rows: list[IdRow] = []
    seen: dict[str, int] = {}
    for line_no, fields in enumerate(csv.reader(text.splitlines()), 1):
        fields = [f.strip() for f in fields]
        if not fields or not fields[0] or fields[0].startswith("#"):
            continue
        if fields[0].lower() in ("pdb_id", "pdbid", "pdb"):
            continue  # header
        where = f"line {line_no}"
        pdb_id = fields[0].lower()
        if not _PDB_ID.match(pdb_id):
            raise InputError(
                path, f"{where}: {fields[0]!r} is not a PDB id (four characters, a digit first)"
            )
        if len(fields) < 2 or not _CCD.match(fields[1].upper()):
            raise InputError(
                path, f"{where}: expected 'pdb_id,ligand[,chain,resnum]' with a CCD ligand code"
            )
        chain = fields[2] if len(fields) > 2 and fields[2] else None
        resnum = None
        if len(fields) > 3 and fields[3]:
            try:
                resnum = int(fields[3])
            except ValueError:
                raise InputError(
                    path, f"{where}: residue number {fields[3]!r} is not an integer"
                ) from None
        if pdb_id in seen:
            raise InputError(
                path,
                f"{where}: {pdb_id} already listed on line {seen[pdb_id]} "
                "(one ligand per entry: a complex is named by its PDB id)",
            )
        seen[pdb_id] = line_no
        rows.append(IdRow(pdb_id, fields[1].upper(), chain, resnum))
    if not rows:
        raise InputError(path, "id list names no complex")
    return rows


def find_structure(folder: Path, pdb_id: str) -> Path | None:
    """The first existing ``<id><suffix>`` file in ``folder`` (upper or lower case id)."""
    for suffix in STRUCTURE_SUFFIXES:
        for name in (pdb_id.lower(), pdb_id.upper()):
            path = Path(folder) / f"{name}{suffix}"
            if path.is_file():
                return path
    return None


def expected_structure(folder: Path, pdb_id: str) -> Path:
    """Where a fetched entry is stored: ``<folder>/<id>.cif.gz``."""
    return Path(folder) / f"{pdb_id.lower()}.cif.gz"


def id_list_refs(source: str, structures: str | Path | None = None) -> list[ComplexRef]:
    """Complex references of an ``ids:LIST.csv`` source, sorted by PDB id. An entry missing from
    the structures folder points at the path a fetch would write (reading it then fails with a
    reason, and the build skips the complex)."""
    folder = Path(structures).expanduser() if structures else default_structures_dir()
    refs = []
    for row in read_id_list(id_list_path(source)):
        path = find_structure(folder, row.pdb_id) or expected_structure(folder, row.pdb_id)
        refs.append(
            ComplexRef(
                pdb_id=row.pdb_id,
                path=path,
                kind="raw",
                ligand_code=row.ligand,
                ligand_chain=row.chain,
                ligand_resnum=row.resnum,
            )
        )
    return sorted(refs, key=lambda r: r.pdb_id)

"""The checks' second reading of a structure: biotite's parsers against the generator's reading.

The generator reads a complex with gemmi (pocket/protein file, PDB or mmCIF entry) and RDKit and
its own MOL2 reader (ligand), through ``chemistry.structure``. Before the validator or the audit
derives an answer again from a complex, :func:`second_reading_problems` reads the same files
again with another parser, biotite (``biotite.structure.io.pdb``, ``.pdbx``, ``.mol``), and
compares every heavy atom of the generator's record with the file's atom at the same place:

* pocket and ion atoms (and the ligand of a PDB/mmCIF entry): element, residue name, residue
  number and insertion code, chain (a repeated chain run that the generator split into a
  segment, ``A2``, is chain ``A`` of the file) and atom name, and the coordinates within
  :data:`TOLERANCE` Å (biotite keeps float32: the files' 3 decimals survive to about 1e-5 Å);
  every alternate location is read, so the generator's altloc choice is matched, not redone;
* the ligand of a PDBbind folder: element and coordinates against the SDF (biotite reads no
  MOL2, so the ligand atom names the generator takes from the MOL2, and a ligand given only as
  MOL2, are not read twice: the result says so in ``unchecked``).

A record atom with no file atom within :data:`TOLERANCE`, or with other labels there, is a
problem naming the complex and the atom. What stays one implementation (docs/architecture.md):
which atoms make the pocket (the cutoff rule), the hydrogens (read or placed), donor/acceptor
typing and the H-bond rules; the second reading checks that the atoms they start from are the
file's.
"""

from __future__ import annotations

import gzip
import io
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from biotite.structure import infer_elements
from biotite.structure.io import mol, pdb, pdbx

from ..core.errors import MisiError
from ..core.records import Complex, ComplexRef

#: Largest distance (Å) between the generator's coordinates of an atom and the second reading's.
TOLERANCE = 2e-3
#: The grid cell (Å) the file's atoms are hashed into to find the one at a record atom's place.
_CELL = 0.01


@dataclass(frozen=True)
class FileAtoms:
    """Heavy atoms of one file as the second parser reads them: coordinates (Å) and labels."""

    coords: np.ndarray
    elements: np.ndarray
    res_names: np.ndarray
    res_numbers: np.ndarray
    ins_codes: np.ndarray
    chains: np.ndarray
    names: np.ndarray


@dataclass(frozen=True)
class SecondReading:
    """What the second reading compared: atoms checked, problems (empty when every atom agrees)
    and what it could not read twice (``unchecked``: e.g. a MOL2-only ligand)."""

    pdb_id: str
    checked: int
    problems: tuple[str, ...]
    unchecked: tuple[str, ...] = ()


def _text(path: Path) -> io.StringIO:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        return io.StringIO(handle.read())


def _heavy(array) -> FileAtoms:
    """The heavy atoms of a biotite array; an element column that holds no element symbol (old
    files keep a serial number in columns 77-78) is inferred from the atom name by biotite."""
    elements = np.char.upper(np.char.strip(array.element.astype(str)))
    unnamed = ~np.char.isalpha(elements)
    if unnamed.any():
        elements[unnamed] = np.char.upper(infer_elements(array.atom_name[unnamed]).astype(str))
    keep = (elements != "H") & (elements != "D")
    array, elements = array[keep], elements[keep]
    return FileAtoms(
        np.asarray(array.coord, dtype=np.float64),
        elements,
        array.res_name.astype(str),
        np.asarray(array.res_id, dtype=np.int64),
        array.ins_code.astype(str),
        array.chain_id.astype(str),
        array.atom_name.astype(str),
    )


def read_structure_file(path: Path) -> FileAtoms:
    """Every heavy atom of a PDB or mmCIF file (``.gz`` too), every alternate location, first
    model, as biotite reads it (author chain and residue numbering for mmCIF)."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".cif", ".mmcif")):
        with warnings.catch_warnings():
            # an entry without author names (auth_comp_id, ...): biotite falls back to the
            # label ones and warns once per column; the atom-by-atom comparison judges the result
            warnings.filterwarnings(
                "ignore", message="Attribute '.*' not found", category=UserWarning
            )
            array = pdbx.get_structure(
                pdbx.CIFFile.read(_text(path)), model=1, altloc="all", use_author_fields=True
            )
    else:
        array = pdb.PDBFile.read(_text(path)).get_structure(model=1, altloc="all")
    return _heavy(array)


def read_sdf(path: Path) -> FileAtoms:
    """The heavy atoms of the first molecule of an SDF file, as biotite reads it."""
    return _heavy(mol.get_structure(mol.SDFile.read(str(path))))


def _pdbbind_files(folder: Path, pdb_id: str) -> tuple[Path | None, Path | None]:
    """(pocket or protein file, ligand SDF) of a PDBbind folder, by the folder's naming."""
    files = sorted(p for p in folder.iterdir() if p.is_file())

    def ending(suffix: str) -> Path | None:
        named = [p for p in files if p.name.lower() == f"{pdb_id}_{suffix}"]
        return (named or [p for p in files if p.name.lower().endswith(f"_{suffix}")] or [None])[0]

    return ending("pocket.pdb") or ending("protein.pdb"), ending("ligand.sdf")


class _Grid:
    """The file's atoms hashed by position: those within :data:`TOLERANCE` of a point."""

    def __init__(self, atoms: FileAtoms):
        self.atoms = atoms
        self.cells: dict[tuple[int, int, int], list[int]] = {}
        for k, key in enumerate(map(tuple, np.floor(atoms.coords / _CELL).astype(np.int64))):
            self.cells.setdefault(key, []).append(k)

    def near(self, xyz: np.ndarray) -> list[int]:
        cx, cy, cz = (int(v) for v in np.floor(xyz / _CELL))
        found = [
            k
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            for dz in (-1, 0, 1)
            for k in self.cells.get((cx + dx, cy + dy, cz + dz), ())
        ]
        return [k for k in found if np.linalg.norm(self.atoms.coords[k] - xyz) <= TOLERANCE]


def _same_chain(record: str, file: str) -> bool:
    """A record chain equals the file's, or is a segment of it (``A2`` of ``A``)."""
    return record == file or (record.startswith(file) and record[len(file) :].isdigit())


def _differences(cx: Complex, i: int, atoms: FileAtoms, k: int, labels: bool) -> list[str]:
    out = []
    if cx.elements[i].upper() != atoms.elements[k]:
        out.append(f"element {cx.elements[i]} vs {atoms.elements[k]}")
    if not labels:
        return out
    if cx.atom_names[i] != atoms.names[k]:
        out.append(f"atom name {cx.atom_names[i]} vs {atoms.names[k]}")
    if cx.res_names[i] != atoms.res_names[k]:
        out.append(f"residue {cx.res_names[i]} vs {atoms.res_names[k]}")
    if cx.residue_index[i] >= 0:
        res = cx.residues[int(cx.residue_index[i])]
        if (res.number, res.ins_code) != (int(atoms.res_numbers[k]), atoms.ins_codes[k]):
            out.append(
                f"residue number {res.number_text} vs {atoms.res_numbers[k]}{atoms.ins_codes[k]}"
            )
        if not _same_chain(res.chain, atoms.chains[k]):
            out.append(f"chain {res.chain} vs {atoms.chains[k]}")
    return out


def _atom_word(cx: Complex, i: int) -> str:
    if cx.residue_index[i] >= 0:
        res = cx.residues[int(cx.residue_index[i])]
        return f"atom {cx.atom_names[i]} of {res.label} chain {res.chain}"
    side = "ligand" if cx.is_ligand[i] else "ion"
    return f"{side} atom {cx.atom_names[i]} (#{i})"


def _compare(cx: Complex, indices: np.ndarray, atoms: FileAtoms, labels: bool) -> Iterator[str]:
    """Problems of the record atoms ``indices`` against the file atoms at their places."""
    grid = _Grid(atoms)
    for i in (int(j) for j in indices):
        where = cx.coords[i]
        near = grid.near(where)
        if not near:
            yield (
                f"{cx.pdb_id}: {_atom_word(cx, i)} at ({where[0]:.3f}, {where[1]:.3f}, "
                f"{where[2]:.3f}) has no atom of the file within {TOLERANCE} Å"
            )
            continue
        found = [_differences(cx, i, atoms, k, labels) for k in near]
        if all(found):  # no file atom there agrees (altlocs may share a place)
            yield f"{cx.pdb_id}: {_atom_word(cx, i)}: {'; '.join(found[0])} (second reading)"


def second_reading_problems(ref: ComplexRef, cx: Complex, limit: int = 20) -> SecondReading:
    """Compare the generator's record ``cx`` of ``ref`` with biotite's reading of its files
    (the module docstring says what is compared); at most ``limit`` problems are listed."""
    heavy_ligand = np.flatnonzero(cx.is_ligand)
    pocket = np.flatnonzero(~cx.is_ligand)
    problems: list[str] = []
    unchecked: list[str] = []
    try:
        if ref.kind == "pdbbind":
            structure, sdf = _pdbbind_files(Path(ref.path), ref.pdb_id)
            if structure is None:
                raise MisiError(f"{ref.pdb_id}: no pocket or protein file to read twice")
            problems += _compare(cx, pocket, read_structure_file(structure), labels=True)
            if sdf is not None:
                problems += _compare(cx, heavy_ligand, read_sdf(sdf), labels=False)
            else:
                unchecked.append("ligand (MOL2 only: biotite reads no MOL2)")
            unchecked.append("ligand atom names (from the MOL2)")
        else:
            atoms = read_structure_file(Path(ref.path))
            problems += _compare(cx, np.arange(len(cx.coords)), atoms, labels=True)
    except MisiError:
        raise
    except Exception as exc:  # the second parser refuses the file: itself a finding
        problems.append(
            f"{ref.pdb_id}: the second reading (biotite) could not read it: "
            f"{type(exc).__name__}: {exc}"
        )
    return SecondReading(ref.pdb_id, len(cx.coords), tuple(problems[:limit]), tuple(unchecked))

"""Read protein-ligand complexes (PDBbind layout or raw PDB/mmCIF) into a ``Complex`` record.

* Protein files are read with gemmi: first model, first alternate location (highest occupancy
  first in practice), waters and non-standard residues dropped from the pocket, hydrogens kept
  apart for the H-bond detector.
* The pocket is every standard amino-acid residue with any heavy atom within ``pocket_cutoff``
  Å (default 10.0) of any ligand heavy atom; whole residues are kept.
* Ligand chemistry (bond orders, charges, hydrogens) comes from the PDBbind SDF (RDKit) with atom
  names from the MOL2, matched by coordinates; for raw entries from the PDB chemical component
  dictionary bundled with biotite, matched by atom name.
* Every failure raises :class:`~.errors.InputError` naming the input and the reason.
"""
from __future__ import annotations

import gzip
import logging
import math
import os
import re
from pathlib import Path

import numpy as np

from ..core.errors import InputError, InputTooLarge
from ..core.records import Complex, ComplexRef, Residue

log = logging.getLogger(__name__)

DEFAULT_POCKET_CUTOFF = 10.0
#: Refuse structure files above this size (bytes): far beyond any real complex.
MAX_FILE_BYTES = 2_000_000_000
#: Refuse pockets with more heavy atoms than this (a wrong cutoff or a broken ligand).
MAX_POCKET_ATOMS = 20_000
#: Refuse ligands with more heavy atoms than this (not a small-molecule ligand).
MAX_LIGAND_ATOMS = 400

STANDARD_AMINO_ACIDS = frozenset(
    "ALA ARG ASN ASP CYS GLN GLU GLY HIS ILE LEU LYS MET PHE PRO SER THR TRP TYR VAL".split()
)
WATER_NAMES = frozenset({"HOH", "WAT", "H2O", "DOD", "D2O", "SOL", "TIP3"})

#: Covalent radii (Å) for distance-based bonding of protein residues.
_COVALENT_RADIUS = {"C": 0.76, "N": 0.71, "O": 0.66, "S": 1.05, "SE": 1.20, "P": 1.07, "H": 0.31}

# Protein donor/acceptor table (SPEC section 3): (residue or '*', atom) -> (donor, acceptor).
_PROTEIN_POLAR: dict[tuple[str, str], tuple[bool, bool]] = {
    ("*", "N"): (True, False),
    ("PRO", "N"): (False, False),
    ("*", "O"): (False, True),
    ("*", "OXT"): (False, True),
    ("SER", "OG"): (True, True),
    ("THR", "OG1"): (True, True),
    ("TYR", "OH"): (True, True),
    ("ASN", "OD1"): (False, True),
    ("GLN", "OE1"): (False, True),
    ("ASN", "ND2"): (True, False),
    ("GLN", "NE2"): (True, False),
    ("HIS", "ND1"): (True, True),
    ("HIS", "NE2"): (True, True),
    ("LYS", "NZ"): (True, False),
    ("ARG", "NE"): (True, False),
    ("ARG", "NH1"): (True, False),
    ("ARG", "NH2"): (True, False),
    ("TRP", "NE1"): (True, False),
    ("ASP", "OD1"): (False, True),
    ("ASP", "OD2"): (False, True),
    ("GLU", "OE1"): (False, True),
    ("GLU", "OE2"): (False, True),
    ("CYS", "SG"): (True, False),
    ("MET", "SD"): (False, True),
}


def protein_polarity(res_name: str, atom_name: str) -> tuple[bool, bool]:
    """(is_donor, is_acceptor) of a protein heavy atom from the per-residue table."""
    key = (res_name, atom_name)
    if key in _PROTEIN_POLAR:
        return _PROTEIN_POLAR[key]
    return _PROTEIN_POLAR.get(("*", atom_name), (False, False))


def normalise_element(symbol: str) -> str:
    """'CL' -> 'Cl', ' c' -> 'C'; unknown or empty -> 'X'."""
    symbol = symbol.strip()
    if not symbol or not symbol.isalpha():
        return "X"
    return symbol[0].upper() + symbol[1:].lower()


# ----------------------------------------------------------------------------------------
# entry points


def load_complex(ref: ComplexRef, pocket_cutoff: float = DEFAULT_POCKET_CUTOFF) -> Complex:
    """Read the complex that ``ref`` points to."""
    if ref.kind == "pdbbind":
        return read_pdbbind_dir(ref.path, pdb_id=ref.pdb_id, pocket_cutoff=pocket_cutoff)
    if not ref.ligand_code:
        raise InputError(ref.path, "a raw PDB/mmCIF entry needs the ligand's residue name (e.g. --ligand STR)")
    return read_raw_entry(ref.path, ref.ligand_code, chain=ref.ligand_chain, resnum=ref.ligand_resnum,
                          pdb_id=ref.pdb_id, pocket_cutoff=pocket_cutoff)


def ref_for_path(path: str | os.PathLike, ligand_code: str | None = None, chain: str | None = None,
                 resnum: int | None = None) -> ComplexRef:
    """A ``ComplexRef`` for a user-given path: a PDBbind directory, or a PDB/mmCIF file."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if path.is_dir():
        return ComplexRef(pdb_id=path.name.lower(), path=path, kind="pdbbind", ligand_code=ligand_code)
    stem = path.name.split(".")[0]
    return ComplexRef(pdb_id=stem.lower()[:4] if len(stem) >= 4 else stem.lower(), path=path, kind="raw",
                      ligand_code=ligand_code, ligand_chain=chain, ligand_resnum=resnum)


def read_pdbbind_dir(path: str | os.PathLike, pdb_id: str | None = None,
                     pocket_cutoff: float = DEFAULT_POCKET_CUTOFF) -> Complex:
    """Read ``<root>/<pdbid>/`` with ``<pdbid>_pocket.pdb`` (or ``_protein.pdb``), ``_ligand.sdf``
    and/or ``_ligand.mol2``."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, "not a directory (expected a PDBbind complex folder <pdbid>/)")
    pdb_id = (pdb_id or path.name).lower()
    files = {p.name.lower(): p for p in path.iterdir() if p.is_file()}

    def find(suffix: str) -> Path | None:
        return files.get(f"{pdb_id}_{suffix}") or next(
            (p for name, p in sorted(files.items()) if name.endswith(f"_{suffix}")), None)

    pocket_file = find("pocket.pdb") or find("protein.pdb")
    sdf_file, mol2_file = find("ligand.sdf"), find("ligand.mol2")
    if pocket_file is None:
        raise InputError(path, f"no {pdb_id}_pocket.pdb or {pdb_id}_protein.pdb found")
    if sdf_file is None and mol2_file is None:
        raise InputError(path, f"no {pdb_id}_ligand.sdf or {pdb_id}_ligand.mol2 found: no ligand")
    ligand = read_ligand_files(sdf_file, mol2_file)
    protein = _read_protein(pocket_file)
    lig_code = ligand.residue_name or "LIG"
    return _assemble(pdb_id, lig_code, str(path), protein, ligand, pocket_cutoff, source=pocket_file)


def read_raw_entry(path: str | os.PathLike, ligand_code: str, chain: str | None = None,
                   resnum: int | None = None, pdb_id: str | None = None,
                   pocket_cutoff: float = DEFAULT_POCKET_CUTOFF) -> Complex:
    """Read a PDB or mmCIF file (optionally gzipped) with the ligand named by its residue name.

    With several copies of the ligand, ``chain``/``resnum`` pick one; otherwise the first copy
    in file order is used. Bond orders come from the chemical component dictionary.
    """
    path = Path(path)
    code = ligand_code.strip().upper()
    protein = _read_protein(path, keep_hetero=code)
    copies = [r for r in protein.het_residues if r["name"] == code
              and (chain is None or r["chain"] == chain) and (resnum is None or r["number"] == resnum)]
    if not copies:
        names = sorted({r["name"] for r in protein.het_residues} | protein.het_names)
        where = f" in chain {chain!r}" if chain is not None else ""
        where += f" with number {resnum}" if resnum is not None else ""
        raise InputError(path, f"no ligand {code}{where} found (hetero residues present: {', '.join(names) or 'none'})")
    ligand = _ligand_from_ccd(path, copies[0])
    pdb_id = (pdb_id or protein.entry_id or path.name.split(".")[0]).lower()
    return _assemble(pdb_id, code, str(path), protein, ligand, pocket_cutoff, source=path)


# ----------------------------------------------------------------------------------------
# protein side


class _ProteinAtoms:
    """Plain arrays of the standard amino-acid atoms of a structure (internal)."""

    def __init__(self) -> None:
        self.coords: list[tuple[float, float, float]] = []
        self.elements: list[str] = []
        self.names: list[str] = []
        self.res_key: list[int] = []
        self.residues: list[Residue] = []
        self.het_residues: list[dict] = []
        self.het_names: set[str] = set()
        self.entry_id: str = ""


def _open_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(path, f"cannot read file ({exc.strerror or exc})") from None
    if size == 0:
        raise InputError(path, "file is empty")
    if size > MAX_FILE_BYTES:
        raise InputTooLarge(path, f"file is {size:,} bytes, above the {MAX_FILE_BYTES:,}-byte limit")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InputError(path, f"broken gzip file ({exc})") from None
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(path, "file is empty")
    return text


def _looks_like_cif(path: Path, text: str) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".cif", ".mmcif")) or text.lstrip().startswith("data_")


def _legacy_pdb_fix(text: str) -> str:
    """Cut ATOM/HETATM records of pre-1996 files to 72 columns when columns 73-80 hold an old
    identifier instead of an element symbol (gemmi then infers elements from atom names)."""
    lines = text.splitlines()
    records = [ln for ln in lines if ln.startswith(("ATOM  ", "HETATM"))]
    if not records:
        return text
    sample = records[: min(len(records), 200)]
    bad = sum(1 for ln in sample if len(ln) > 72 and ln[72:76].strip() and not ln[76:78].strip().isalpha())
    if bad < len(sample) // 2:
        return text
    return "\n".join(ln[:72] if ln.startswith(("ATOM  ", "HETATM", "ANISOU")) else ln for ln in lines) + "\n"


def _read_structure(path: Path):
    import gemmi  # noqa: PLC0415 (heavy import kept out of import time)

    text = _open_text(path)
    try:
        if _looks_like_cif(path, text):
            doc = gemmi.cif.read_string(text)
            st = gemmi.make_structure_from_block(doc.sole_block())
        else:
            st = gemmi.read_pdb_string(_legacy_pdb_fix(text))
    except (RuntimeError, ValueError, IndexError) as exc:
        raise InputError(path, f"unparsable structure file ({exc})") from None
    if len(st) == 0 or sum(1 for _ in st[0].all()) == 0:
        raise InputError(path, "no atom records found")
    st.remove_alternative_conformations()
    return st


def _read_protein(path: Path, keep_hetero: str | None = None) -> _ProteinAtoms:
    """Standard amino-acid heavy atoms (+ their hydrogens) of the first model, and hetero
    residues named ``keep_hetero`` (raw entries) with their atoms."""
    st = _read_structure(path)
    out = _ProteinAtoms()
    out.entry_id = st.name if re.fullmatch(r"[0-9][A-Za-z0-9]{3}", st.name or "") else ""
    out.h_coords: list[tuple[float, float, float]] = []
    out.h_res: list[int] = []
    out.h_names: list[str] = []
    skipped: set[str] = set()
    for chain in st[0]:
        for res in chain:
            name = res.name.strip().upper()
            if name in WATER_NAMES:
                continue
            if keep_hetero and name == keep_hetero:
                atoms = [(a.name, normalise_element(a.element.name), (a.pos.x, a.pos.y, a.pos.z)) for a in res]
                out.het_residues.append({"name": name, "chain": chain.name, "number": res.seqid.num,
                                         "icode": res.seqid.icode.strip(), "atoms": atoms})
                continue
            if name not in STANDARD_AMINO_ACIDS:
                skipped.add(name)
                if res.het_flag == "H":
                    out.het_names.add(name)
                continue
            key = len(out.residues)
            out.residues.append(Residue(chain.name.strip() or "_", name, int(res.seqid.num),
                                        res.seqid.icode.strip()))
            for atom in res:
                element = normalise_element(atom.element.name)
                pos = (atom.pos.x, atom.pos.y, atom.pos.z)
                if element in ("H", "D"):
                    out.h_coords.append(pos)
                    out.h_res.append(key)
                    out.h_names.append(atom.name)
                    continue
                out.coords.append(pos)
                out.elements.append(element)
                out.names.append(atom.name)
                out.res_key.append(key)
    if skipped:
        log.debug("%s: non-standard residues left out of the pocket: %s", path, ", ".join(sorted(skipped)))
    if not out.coords and not out.het_residues:
        raise InputError(path, "no standard amino-acid heavy atoms found (only hydrogens, waters or hetero groups?)")
    return out


# ----------------------------------------------------------------------------------------
# ligand side


class LigandData:
    """Ligand heavy atoms with chemistry (internal to reading)."""

    def __init__(self, coords, elements, names, charges, bonds, orders, n_hydrogens, aromatic,
                 h_coords, h_parent, residue_name, source):
        self.coords = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
        self.elements = list(elements)
        self.names = list(names)
        self.charges = np.asarray(charges, dtype=np.int64)
        self.bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
        self.orders = np.asarray(orders, dtype=np.int64)
        self.n_hydrogens = np.asarray(n_hydrogens, dtype=np.int64)
        self.aromatic = np.asarray(aromatic, dtype=bool)
        self.h_coords = np.asarray(h_coords, dtype=np.float64).reshape(-1, 3)
        self.h_parent = np.asarray(h_parent, dtype=np.int64)
        self.residue_name = residue_name
        self.source = source


def _parse_mol2_atoms(path: Path) -> list[dict]:
    """Atom records of the first molecule of a MOL2 file: name, coords, type, subst id/name."""
    text = _open_text(path)
    atoms: list[dict] = []
    section = None
    for line in text.splitlines():
        if line.startswith("@<TRIPOS>"):
            if section == "ATOM" and atoms:
                break
            section = line[9:].strip().upper()
            continue
        if section != "ATOM" or not line.strip():
            continue
        parts = line.split()
        if len(parts) < 6:
            raise InputError(path, f"malformed MOL2 atom line: {line.strip()[:80]!r}")
        try:
            xyz = (float(parts[2]), float(parts[3]), float(parts[4]))
        except ValueError:
            raise InputError(path, f"malformed MOL2 coordinates: {line.strip()[:80]!r}") from None
        atoms.append({"name": parts[1], "xyz": xyz, "type": parts[5],
                      "subst_id": parts[6] if len(parts) > 6 else "1",
                      "subst_name": parts[7] if len(parts) > 7 else ""})
    if not atoms:
        raise InputError(path, "no @<TRIPOS>ATOM records")
    return atoms


def _rdkit_mol_from_file(path: Path):
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    text = _open_text(path)
    if path.name.lower().endswith(".mol2"):
        mol = Chem.MolFromMol2Block(text, removeHs=False)
        if mol is None:
            mol = Chem.MolFromMol2Block(text, removeHs=False, sanitize=False)
    else:
        supplier = Chem.SDMolSupplier()
        supplier.SetData(text, removeHs=False)
        mol = next(iter(supplier), None) if len(supplier) else None
        if mol is None:
            supplier.SetData(text, removeHs=False, sanitize=False)
            mol = next(iter(supplier), None) if len(supplier) else None
            if mol is not None:
                mol.UpdatePropertyCache(strict=False)
    return mol


def read_ligand_files(sdf: Path | None, mol2: Path | None) -> LigandData:
    """Ligand from PDBbind files: chemistry from the SDF (or MOL2), names from the MOL2."""
    mol = None
    chem_source = None
    for candidate in (sdf, mol2):
        if candidate is None:
            continue
        try:
            mol = _rdkit_mol_from_file(candidate)
        except InputTooLarge:
            raise
        except InputError:
            mol = None
        if mol is not None and mol.GetNumAtoms():
            chem_source = candidate
            break
    if mol is None:
        shown = sdf or mol2
        raise InputError(shown, "no readable ligand molecule in the SDF/MOL2 files")
    mol2_atoms = _parse_mol2_atoms(mol2) if mol2 is not None else None
    lig = _ligand_from_rdkit(mol, chem_source)
    if not len(lig.coords):
        raise InputError(chem_source, "ligand has no heavy atoms (only hydrogens?)")
    if mol2_atoms is not None:
        heavy = [a for a in mol2_atoms if normalise_element(a["type"].split(".")[0]) not in ("H", "D")]
        names, residue = _names_by_coordinates(lig.coords, heavy, mol2)
        lig.names = names
        lig.residue_name = residue or lig.residue_name
    return lig


def _names_by_coordinates(coords: np.ndarray, mol2_heavy: list[dict], mol2_path: Path) -> tuple[list[str], str]:
    """Atom names of ``coords`` from MOL2 records matched by position; repeated names get the
    MOL2 substructure number (``N:2``)."""
    ref = np.array([a["xyz"] for a in mol2_heavy], dtype=np.float64).reshape(-1, 3)
    if len(ref) == 0:
        raise InputError(mol2_path, "MOL2 has no heavy atoms")
    dist = np.linalg.norm(coords[:, None, :] - ref[None, :, :], axis=2)
    nearest = dist.argmin(axis=1)
    if (dist[np.arange(len(coords)), nearest] > 0.05).any() or len(set(nearest.tolist())) != len(coords):
        raise InputError(mol2_path, "ligand atoms of the SDF and MOL2 do not match by coordinates")
    chosen = [mol2_heavy[i] for i in nearest]
    names = [a["name"] for a in chosen]
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    names = [f"{a['name']}:{a['subst_id']}" if counts[a["name"]] > 1 else a["name"] for a in chosen]
    seen: dict[str, int] = {}
    unique = []
    for name in names:  # still repeated within one substructure: number them in order
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if names.count(name) == 1 else f"{name}.{seen[name]}")
    subst = {re.sub(r"\d+$", "", a["subst_name"]) for a in chosen if a["subst_name"]}
    residue = subst.pop() if len(subst) == 1 else ""
    return unique, residue.upper()[:3] if residue else ""


def _ligand_from_rdkit(mol, source: Path) -> LigandData:
    conf = mol.GetConformer() if mol.GetNumConformers() else None
    if conf is None:
        raise InputError(source, "ligand has no coordinates")
    heavy = [a.GetIdx() for a in mol.GetAtoms() if a.GetAtomicNum() > 1]
    index = {old: new for new, old in enumerate(heavy)}
    pos = conf.GetPositions()
    coords = pos[heavy]
    elements = [normalise_element(mol.GetAtomWithIdx(i).GetSymbol()) for i in heavy]
    charges = [mol.GetAtomWithIdx(i).GetFormalCharge() for i in heavy]
    aromatic = [mol.GetAtomWithIdx(i).GetIsAromatic() for i in heavy]
    n_h = []
    for i in heavy:
        atom = mol.GetAtomWithIdx(i)
        try:
            n_h.append(atom.GetTotalNumHs(includeNeighbors=True))
        except RuntimeError:
            n_h.append(sum(1 for nb in atom.GetNeighbors() if nb.GetAtomicNum() == 1))
    bonds, orders = [], []
    h_coords, h_parent = [], []
    for bond in mol.GetBonds():
        a, b = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if a in index and b in index:
            bonds.append(sorted((index[a], index[b])))
            orders.append(_rdkit_order(bond))
        elif a in index or b in index:
            heavy_end, h_end = (a, b) if a in index else (b, a)
            h_coords.append(pos[h_end])
            h_parent.append(index[heavy_end])
    names = [f"{el}{k + 1}" for k, el in enumerate(elements)]
    resname = ""
    if mol.HasProp("_Name"):
        title = mol.GetProp("_Name").strip()
        m = re.match(r"^([A-Z0-9]{1,3})$", title)
        resname = m.group(1) if m else ""
    return LigandData(coords, elements, names, charges, bonds, orders, n_h, aromatic,
                      h_coords, h_parent, resname, str(source))


def _rdkit_order(bond) -> int:
    if bond.GetIsAromatic():
        return 4
    value = bond.GetBondTypeAsDouble()
    return int(value) if value in (1.0, 2.0, 3.0) else 1


def _ligand_from_ccd(path: Path, copy: dict) -> LigandData:
    """Build the ligand of a raw entry with bond orders and charges from the CCD template."""
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    atoms = [a for a in copy["atoms"] if a[1] not in ("H", "D")]
    if not atoms:
        raise InputError(path, f"ligand {copy['name']} has only hydrogen atoms")
    if len(atoms) > MAX_LIGAND_ATOMS:
        raise InputError(path, f"ligand {copy['name']} has {len(atoms)} heavy atoms (> {MAX_LIGAND_ATOMS}); not a small molecule")
    names = [a[0] for a in atoms]
    coords = np.array([a[2] for a in atoms], dtype=np.float64)
    elements = [a[1] for a in atoms]
    template = _ccd_template(copy["name"])
    rw = Chem.RWMol()
    charges = [0] * len(atoms)
    bonds: list[list[int]] = []
    orders: list[int] = []
    if template is not None:
        t_index = {n: k for k, n in enumerate(template["names"])}
        for k, name in enumerate(names):
            if name in t_index:
                charges[k] = int(template["charges"][t_index[name]])
        local = {n: k for k, n in enumerate(names)}
        for a, b, order in template["bonds"]:
            na, nb = template["names"][a], template["names"][b]
            if na in local and nb in local:
                bonds.append(sorted((local[na], local[nb])))
                orders.append(order)
    else:
        log.warning("%s: no chemical component template for %s; bonds from distances, all single",
                    path, copy["name"])
        bonds = _distance_bonds(coords, elements)
        orders = [1] * len(bonds)
    for el, q in zip(elements, charges):
        atom = Chem.Atom(el if el != "X" else "*")
        atom.SetFormalCharge(q)
        rw.AddAtom(atom)
    for (a, b), order in zip(bonds, orders):
        bt = {1: Chem.BondType.SINGLE, 2: Chem.BondType.DOUBLE, 3: Chem.BondType.TRIPLE,
              4: Chem.BondType.AROMATIC}.get(order, Chem.BondType.SINGLE)
        rw.AddBond(int(a), int(b), bt)
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError):
        mol.UpdatePropertyCache(strict=False)
    n_h = [atom.GetTotalNumHs() for atom in mol.GetAtoms()]
    aromatic = [atom.GetIsAromatic() for atom in mol.GetAtoms()]
    final_orders = [_rdkit_order(mol.GetBondBetweenAtoms(int(a), int(b))) for a, b in bonds]
    unique_names = names if len(set(names)) == len(names) else [f"{n}:{k + 1}" for k, n in enumerate(names)]
    return LigandData(coords, elements, unique_names, charges, bonds, final_orders, n_h, aromatic,
                      np.zeros((0, 3)), np.zeros(0, dtype=np.int64), copy["name"], str(path))


_CCD_CACHE: dict[str, dict | None] = {}


def _ccd_template(code: str) -> dict | None:
    """Atom names, charges and bonds (order 1-3, 4 aromatic) of a CCD component, or None."""
    if code in _CCD_CACHE:
        return _CCD_CACHE[code]
    try:
        import biotite.structure as struc  # noqa: PLC0415
        import biotite.structure.info as info  # noqa: PLC0415

        arr = info.residue(code)
    except Exception as exc:  # biotite missing or unknown code: fall back to distances
        log.debug("no CCD template for %s: %s", code, exc)
        _CCD_CACHE[code] = None
        return None
    heavy = [k for k, el in enumerate(arr.element) if el not in ("H", "D")]
    remap = {old: new for new, old in enumerate(heavy)}
    kind = {struc.BondType.SINGLE: 1, struc.BondType.DOUBLE: 2, struc.BondType.TRIPLE: 3,
            struc.BondType.AROMATIC_SINGLE: 1, struc.BondType.AROMATIC_DOUBLE: 2,
            struc.BondType.AROMATIC_TRIPLE: 3, struc.BondType.AROMATIC: 4}
    bonds = [(remap[a], remap[b], kind.get(struc.BondType(t), 1)) for a, b, t in arr.bonds.as_array()
             if a in remap and b in remap]
    template = {"names": [str(arr.atom_name[k]) for k in heavy],
                "charges": [int(arr.charge[k]) for k in heavy], "bonds": bonds}
    _CCD_CACHE[code] = template
    return template


def _distance_bonds(coords: np.ndarray, elements: list[str], slack: float = 0.45) -> list[list[int]]:
    radius = np.array([_COVALENT_RADIUS.get(e.upper(), 0.77) for e in elements])
    dist = np.linalg.norm(coords[:, None] - coords[None], axis=2)
    limit = radius[:, None] + radius[None, :] + slack
    i, j = np.nonzero(np.triu((dist < limit) & (dist > 0.4), k=1))
    return [[int(a), int(b)] for a, b in zip(i, j)]


def ligand_polarity(lig: LigandData) -> tuple[np.ndarray, np.ndarray]:
    """(is_donor, is_acceptor) of ligand heavy atoms from their chemistry (SPEC section 3).

    Donors: N or O carrying at least one hydrogen (explicit or implied). Acceptors: O with
    charge <= 0; N with a lone pair, i.e. not positively charged, not an amide/sulfonamide N
    (bonded to a C or S that has a double bond to O/S), not an aromatic N carrying an H or
    three connections, not a four-connected N.
    """
    n = len(lig.elements)
    donor = np.zeros(n, dtype=bool)
    acceptor = np.zeros(n, dtype=bool)
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for (a, b), order in zip(lig.bonds, lig.orders):
        neighbours[a].append((int(b), int(order)))
        neighbours[b].append((int(a), int(order)))
    for i, el in enumerate(lig.elements):
        if el not in ("N", "O"):
            continue
        n_h = int(lig.n_hydrogens[i])
        donor[i] = n_h > 0
        q = int(lig.charges[i])
        if el == "O":
            acceptor[i] = q <= 0
            continue
        connections = len(neighbours[i]) + n_h
        if q > 0 or connections >= 4:
            continue
        if lig.aromatic[i] and (n_h > 0 or len(neighbours[i]) >= 3):
            continue
        if any(order in (2, 3) for _, order in neighbours[i]) or lig.aromatic[i]:
            acceptor[i] = True
            continue
        amide = any(
            lig.elements[j] in ("C", "S") and any(
                lig.elements[k] in ("O", "S") and order == 2 for k, order in neighbours[j] if k != i)
            for j, _ in neighbours[i])
        acceptor[i] = not amide
    return donor, acceptor


# ----------------------------------------------------------------------------------------
# assembling the record


def _assemble(pdb_id: str, lig_code: str, location: str, protein: _ProteinAtoms, lig: LigandData,
              cutoff: float, source: Path) -> Complex:
    if not (isinstance(cutoff, (int, float)) and math.isfinite(cutoff) and cutoff > 0):
        raise InputError(location, f"pocket cutoff must be a positive number of Å, got {cutoff!r}")
    p_coords = np.asarray(protein.coords, dtype=np.float64).reshape(-1, 3)
    res_key = np.asarray(protein.res_key, dtype=np.int64)
    lig_coords = lig.coords
    # whole residues with any heavy atom within the cutoff of any ligand heavy atom
    lo, hi = lig_coords.min(axis=0) - cutoff, lig_coords.max(axis=0) + cutoff
    near_box = np.flatnonzero(((p_coords >= lo) & (p_coords <= hi)).all(axis=1)) if len(p_coords) else np.zeros(0, int)
    close = np.zeros(len(p_coords), dtype=bool)
    for start in range(0, len(near_box), 4096):
        idx = near_box[start:start + 4096]
        d2 = ((p_coords[idx, None, :] - lig_coords[None, :, :]) ** 2).sum(axis=2)
        close[idx] = (d2 <= cutoff * cutoff).any(axis=1)
    pocket_res = sorted(set(res_key[close].tolist()))
    if not pocket_res:
        raise InputError(location, f"no protein residue within {cutoff:g} Å of ligand {lig_code}: ligand is far from any protein")
    keep = np.isin(res_key, pocket_res)
    if keep.sum() > MAX_POCKET_ATOMS:
        raise InputTooLarge(location, f"pocket has {int(keep.sum())} heavy atoms (> {MAX_POCKET_ATOMS})")
    res_new = {old: new for new, old in enumerate(pocket_res)}
    residues = tuple(protein.residues[k] for k in pocket_res)
    p_idx = np.flatnonzero(keep)
    n_p, n_l = len(p_idx), len(lig_coords)
    res_of_atom = np.array([res_new[k] for k in res_key[p_idx]], dtype=np.int64)

    p_names = [protein.names[k] for k in p_idx]
    p_elements = [protein.elements[k] for k in p_idx]
    p_resnames = [residues[r].name for r in res_of_atom]
    coords = np.vstack([p_coords[p_idx], lig_coords])
    elements = np.array(p_elements + lig.elements, dtype="<U2")
    atom_names = np.array(p_names + lig.names)
    res_names = np.array(p_resnames + [lig_code] * n_l)
    res_numbers = np.array([residues[r].number for r in res_of_atom] + [0] * n_l, dtype=np.int64)
    ins_codes = np.array([residues[r].ins_code for r in res_of_atom] + [""] * n_l)
    chain_ids = np.array([residues[r].chain for r in res_of_atom] + [""] * n_l)
    is_ligand = np.array([False] * n_p + [True] * n_l)
    residue_index = np.concatenate([res_of_atom, -np.ones(n_l, dtype=np.int64)])

    polar = [protein_polarity(rn, an) for rn, an in zip(p_resnames, p_names)]
    l_donor, l_acceptor = ligand_polarity(lig)
    is_donor = np.array([d for d, _ in polar] + l_donor.tolist(), dtype=bool)
    is_acceptor = np.array([a for _, a in polar] + l_acceptor.tolist(), dtype=bool)
    charges = np.concatenate([np.zeros(n_p, dtype=np.int64), lig.charges])

    p_bonds = _protein_bonds(coords[:n_p], p_elements, p_names, res_of_atom)
    l_bonds = lig.bonds + n_p
    bonds = np.vstack([p_bonds, l_bonds]).astype(np.int64) if len(l_bonds) else p_bonds.astype(np.int64)
    orders = np.concatenate([np.ones(len(p_bonds), dtype=np.int64), lig.orders]).astype(np.int8)

    h_coords, h_parent = _protein_hydrogens(protein, pocket_res, res_new, coords[:n_p], res_of_atom)
    if len(lig.h_coords):
        h_coords = np.vstack([h_coords, lig.h_coords])
        h_parent = np.concatenate([h_parent, lig.h_parent + n_p])
    return Complex(
        pdb_id=pdb_id, ligand_code=lig_code, source=location, coords=coords, elements=elements,
        atom_names=atom_names, res_names=res_names, res_numbers=res_numbers, ins_codes=ins_codes,
        chain_ids=chain_ids, is_ligand=is_ligand, residue_index=residue_index, residues=residues,
        bonds=bonds.reshape(-1, 2), bond_orders=orders, is_donor=is_donor, is_acceptor=is_acceptor,
        formal_charges=charges, h_coords=h_coords.reshape(-1, 3), h_parent=h_parent.astype(np.int64),
    )


def _protein_bonds(coords: np.ndarray, elements: list[str], names: list[str], res_of_atom: np.ndarray) -> np.ndarray:
    """Covalent bonds of pocket residues from distances: within a residue, peptide C-N between
    residues, and disulfides."""
    radius = np.array([_COVALENT_RADIUS.get(e.upper(), 0.77) for e in elements])
    out: list[tuple[int, int]] = []
    order = np.argsort(res_of_atom, kind="stable")
    bounds = np.flatnonzero(np.diff(res_of_atom[order])) + 1
    for group in np.split(order, bounds):
        if len(group) < 2:
            continue
        xyz = coords[group]
        d = np.linalg.norm(xyz[:, None] - xyz[None], axis=2)
        lim = radius[group][:, None] + radius[group][None, :] + 0.45
        i, j = np.nonzero(np.triu((d < lim) & (d > 0.4), k=1))
        out.extend((int(group[a]), int(group[b])) for a, b in zip(i, j))
    names_arr = np.asarray(names)
    c_idx = np.flatnonzero(names_arr == "C")
    n_idx = np.flatnonzero(names_arr == "N")
    if len(c_idx) and len(n_idx):
        d = np.linalg.norm(coords[c_idx, None] - coords[None, n_idx], axis=2)
        for a, b in zip(*np.nonzero(d < 1.75)):
            if res_of_atom[c_idx[a]] != res_of_atom[n_idx[b]]:
                out.append(tuple(sorted((int(c_idx[a]), int(n_idx[b])))))
    s_idx = np.flatnonzero(names_arr == "SG")
    if len(s_idx) > 1:
        d = np.linalg.norm(coords[s_idx, None] - coords[None, s_idx], axis=2)
        for a, b in zip(*np.nonzero(np.triu(d < 2.3, k=1))):
            out.append((int(s_idx[a]), int(s_idx[b])))
    return np.array(sorted(set(out)), dtype=np.int64).reshape(-1, 2)


def _protein_hydrogens(protein: _ProteinAtoms, pocket_res: list[int], res_new: dict[int, int],
                       heavy: np.ndarray, res_of_atom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hydrogens of pocket residues attached to their nearest heavy atom of the same residue
    (within 1.3 Å)."""
    if not protein.h_coords:
        return np.zeros((0, 3)), np.zeros(0, dtype=np.int64)
    h_res = np.asarray(protein.h_res)
    h_xyz = np.asarray(protein.h_coords, dtype=np.float64)
    keep = np.isin(h_res, pocket_res)
    coords, parents = [], []
    for pos, r in zip(h_xyz[keep], h_res[keep]):
        cand = np.flatnonzero(res_of_atom == res_new[int(r)])
        if not len(cand):
            continue
        d = np.linalg.norm(heavy[cand] - pos, axis=1)
        k = int(d.argmin())
        if d[k] <= 1.3:
            coords.append(pos)
            parents.append(int(cand[k]))
    return np.asarray(coords, dtype=np.float64).reshape(-1, 3), np.asarray(parents, dtype=np.int64)


__all__ = ["ComplexRef", "Complex", "Residue", "load_complex", "read_pdbbind_dir", "read_raw_entry",
           "ref_for_path", "protein_polarity", "ligand_polarity", "DEFAULT_POCKET_CUTOFF"]

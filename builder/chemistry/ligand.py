"""Ligand side of a PDBbind complex: the SDF/MOL2 files read with RDKit into ``LigandData``
(heavy atoms with bond orders, charges, hydrogen counts and the input's hydrogens), atom names
from the MOL2 matched by coordinates.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np

from ..core.errors import InputError, InputTooLarge
from .files import normalise_element, open_text, parse_mol2
from .geometry_checks import check_ligand

logger = logging.getLogger(__name__)


class LigandData:
    """Ligand heavy atoms with chemistry (internal to reading). Bond orders 1-3, 4 aromatic;
    ``h_coords``/``h_parent``: the input's hydrogens and the heavy atom each is bonded to."""

    def __init__(
        self,
        coords,
        elements,
        names,
        charges,
        bonds,
        orders,
        n_hydrogens,
        aromatic,
        h_coords,
        h_parent,
        residue_name,
        source,
    ):
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
        #: the MOL2's hydrogens and their heavy atoms (indices into ``coords``); empty without
        #: a MOL2 or when it draws none
        self.mol2_h_coords = np.zeros((0, 3))
        self.mol2_h_parent = np.zeros(0, dtype=np.int64)
        #: MOL2 hydrogens bonded to no ligand heavy atom (left out, counted in the read report)
        self.mol2_unbonded_h = 0


def rdkit_mol_from_file(path: Path):
    """First molecule of an SDF or MOL2 file with its hydrogens (sanitised when RDKit can), or None."""
    from rdkit import Chem, RDLogger  # noqa: PLC0415

    RDLogger.DisableLog("rdApp.*")
    text = open_text(path)
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
    """Ligand from PDBbind files: chemistry from the SDF (or the MOL2 when there is no SDF),
    names from the MOL2. An SDF that is there but cannot be read (truncated, garbled) refuses
    the complex: the MOL2 is not used in its place, since its bond orders and charges are often
    worse (1HVR: 2 H-bonds instead of 10), which would change answers without a word."""
    chem_source = sdf if sdf is not None else mol2
    if chem_source is None:
        raise InputError("ligand", "no ligand SDF or MOL2 file")
    try:
        mol = rdkit_mol_from_file(chem_source)
    except InputTooLarge:
        raise
    except InputError as exc:
        raise InputError(
            chem_source, f"unreadable ligand file ({exc.reason}){_no_fallback(sdf, mol2)}"
        ) from None
    if mol is None or not mol.GetNumAtoms():
        raise InputError(
            chem_source,
            f"no readable ligand molecule (truncated or malformed){_no_fallback(sdf, mol2)}",
        )
    mol2_atoms, mol2_bonds = parse_mol2(mol2) if mol2 is not None else (None, [])
    lig = ligand_from_rdkit(mol, chem_source)
    if not len(lig.coords):
        raise InputError(chem_source, "ligand has no heavy atoms (only hydrogens?)")
    # before names come from the MOL2 (matched by position): atoms named by element and place
    check_ligand(str(chem_source), lig.names, lig.coords, lig.bonds, lig.h_coords, lig.h_parent)
    if mol2_atoms is not None:
        heavy = [a for a in mol2_atoms if a["element"] not in ("H", "D")]
        if len(heavy) != len(lig.coords):
            raise InputError(
                mol2,
                f"MOL2 has {len(heavy)} heavy atoms, {chem_source.name} has {len(lig.coords)}: "
                "the two ligand files do not describe one molecule",
            )
        names, residue = _names_by_coordinates(lig.coords, heavy, mol2)
        lig.names = names
        lig.residue_name = residue or lig.residue_name
        lig.mol2_h_coords, lig.mol2_h_parent = _mol2_hydrogens(
            lig.coords, mol2_atoms, mol2_bonds, mol2
        )
        n_h = sum(1 for a in mol2_atoms if a["element"] in ("H", "D"))
        lig.mol2_unbonded_h = n_h - len(lig.mol2_h_parent)
    return lig


def _no_fallback(sdf: Path | None, mol2: Path | None) -> str:
    if sdf is not None and mol2 is not None:
        return f"; {mol2.name} is not used in its place (its chemistry can differ): fix or remove the SDF"
    return ""


def _mol2_hydrogens(
    coords: np.ndarray, atoms: list[dict], bonds: list[tuple[int, int, str]], mol2_path: Path
) -> tuple[np.ndarray, np.ndarray]:
    """The MOL2's hydrogens and the ligand heavy atom (index into ``coords``) each is bonded to
    (by the MOL2's bond table; heavy atoms matched by position as for the names)."""
    heavy_of: dict[int, int] = {}
    for k, atom in enumerate(atoms):
        if atom["element"] in ("H", "D"):
            continue
        d = np.linalg.norm(coords - np.asarray(atom["xyz"]), axis=1)
        j = int(d.argmin())
        if d[j] <= 0.05:
            heavy_of[k] = j
    h_xyz, parents = [], []
    for a, b, _ in bonds:
        for h, other in ((a, b), (b, a)):
            if 0 <= h < len(atoms) and atoms[h]["element"] in ("H", "D") and other in heavy_of:
                h_xyz.append(atoms[h]["xyz"])
                parents.append(heavy_of[other])
    n_h = sum(1 for a in atoms if a["element"] in ("H", "D"))
    if len(parents) != n_h:  # not fatal: the plip mode does not read them
        logger.warning(
            "%s: %d MOL2 hydrogen(s) not bonded to a ligand heavy atom are ignored",
            mol2_path,
            n_h - len(parents),
        )
    return np.asarray(h_xyz, dtype=np.float64).reshape(-1, 3), np.asarray(parents, dtype=np.int64)


def _names_by_coordinates(
    coords: np.ndarray, mol2_heavy: list[dict], mol2_path: Path
) -> tuple[list[str], str]:
    """Atom names of ``coords`` from MOL2 records matched by position; repeated names get the
    MOL2 substructure number (``N:2``)."""
    ref = np.array([a["xyz"] for a in mol2_heavy], dtype=np.float64).reshape(-1, 3)
    if len(ref) == 0:
        raise InputError(mol2_path, "MOL2 has no heavy atoms")
    dist = np.linalg.norm(coords[:, None, :] - ref[None, :, :], axis=2)
    nearest = dist.argmin(axis=1)
    if (dist[np.arange(len(coords)), nearest] > 0.05).any() or len(set(nearest.tolist())) != len(
        coords
    ):
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
    codes = {residue_code(a) for a in chosen}
    return unique, codes.pop() if len(codes) == 1 else ""


_CODE = re.compile(r"[A-Z0-9]{1,5}")


def residue_code(atom: dict) -> str:
    """The residue name (ligand code) a MOL2 atom record gives, digits kept (XK2, 478, 3D1): its
    SUBSTRUCTURE record's residue type where that names it, else its ``subst_name`` less a
    residue-number suffix equal to its ``subst_id`` (Open Babel writes XK2 263 as ``263 XK2263``)
    where the name is longer than three characters or the rest is three; "" when no 1-5 letter
    or digit code results (PDB codes are 1-3 characters, extended ones 5)."""
    name, sid = atom.get("subst_name", "").upper(), atom.get("subst_id", "")
    sub_type = atom.get("sub_type", "").upper()
    if sub_type and name.startswith(sub_type) and _CODE.fullmatch(sub_type):
        return sub_type
    if sid.isdigit() and name.endswith(sid) and len(name) > len(sid):
        rest = name[: -len(sid)]
        if len(name) > 3 or len(rest) >= 3:
            name = rest
    return name if _CODE.fullmatch(name) else ""


def ligand_from_rdkit(mol, source: Path) -> LigandData:
    """``LigandData`` of an RDKit molecule with coordinates (hydrogens moved to ``h_coords``)."""
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
            orders.append(rdkit_order(bond))
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
    return LigandData(
        coords,
        elements,
        names,
        charges,
        bonds,
        orders,
        n_h,
        aromatic,
        h_coords,
        h_parent,
        resname,
        str(source),
    )


def rdkit_order(bond) -> int:
    """Bond order of an RDKit bond: 1-3, 4 for aromatic."""
    if bond.GetIsAromatic():
        return 4
    value = bond.GetBondTypeAsDouble()
    return int(value) if value in (1.0, 2.0, 3.0) else 1

"""Sample builder, writers: the PDBbind-layout pocket PDB, ligand SDF and ligand MOL2 (SYBYL
types) of one complex, and the pocket cut (the chemistry layer's, on gemmi residues).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from misi_bench.builder.chemistry.modified import keep_reason, looks_like_amino_acid
from misi_bench.builder.chemistry.protein import (
    METAL_ELEMENTS,
    STANDARD_AMINO_ACIDS,
    pocket_residue_keys,
)
from misi_bench.builder.core.constants import DEFAULT_POCKET_CUTOFF as POCKET_CUTOFF

from .sample_ligands import atom_element

# --------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------


def sybyl_type(atom) -> str:
    from rdkit import Chem

    el = atom.GetSymbol()
    hyb = atom.GetHybridization()
    heavy_nbrs = [n for n in atom.GetNeighbors() if n.GetAtomicNum() > 1]
    if el == "H":
        return "H"
    if el == "C":
        if atom.GetIsAromatic():
            return "C.ar"
        n_nbrs = [n for n in heavy_nbrs if n.GetSymbol() == "N"]
        if (
            len(n_nbrs) == 3
            and hyb == Chem.HybridizationType.SP2
            and (atom.GetFormalCharge() > 0 or any(n.GetFormalCharge() > 0 for n in n_nbrs))
        ):
            return "C.cat"
        if hyb == Chem.HybridizationType.SP:
            return "C.1"
        if hyb == Chem.HybridizationType.SP2:
            return "C.2"
        return "C.3"
    if el == "N":
        if (
            atom.GetFormalCharge() > 0
            and hyb == Chem.HybridizationType.SP3
            and atom.GetDegree() + atom.GetTotalNumHs() == 4
        ):
            return "N.4"
        if atom.GetIsAromatic():
            return "N.ar"
        if any(b.GetBondType() == Chem.BondType.TRIPLE for b in atom.GetBonds()):
            return "N.1"
        if _is_amide_n(atom):
            return "N.am"
        if any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds()):
            return "N.pl3" if atom.GetFormalCharge() > 0 else "N.2"
        if hyb in (Chem.HybridizationType.SP2, Chem.HybridizationType.SP) or any(
            n.GetIsAromatic() or n.GetHybridization() == Chem.HybridizationType.SP2
            for n in heavy_nbrs
        ):
            return "N.pl3"
        return "N.3"
    if el == "O":
        if len(heavy_nbrs) == 1 and _is_co2_oxygen(atom):
            return "O.co2"
        if (
            any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds())
            or atom.GetIsAromatic()
        ):
            return "O.2"
        return "O.3"
    if el == "S":
        terminal_o = [n for n in heavy_nbrs if n.GetSymbol() == "O" and n.GetDegree() == 1]
        if len(terminal_o) >= 2:
            return "S.O2"
        if len(terminal_o) == 1:
            return "S.O"
        if (
            any(b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds())
            or atom.GetIsAromatic()
        ):
            return "S.2"
        return "S.3"
    if el == "P":
        return "P.3"
    return el


def _is_amide_n(atom) -> bool:
    from rdkit import Chem

    for n in atom.GetNeighbors():
        if n.GetSymbol() != "C" or n.GetIsAromatic():
            continue
        for b in n.GetBonds():
            o = b.GetOtherAtom(n)
            if (
                b.GetBondType() == Chem.BondType.DOUBLE
                and o.GetSymbol() in ("O", "S")
                and o.GetIdx() != atom.GetIdx()
            ):
                return True
    return False


def _is_co2_oxygen(atom) -> bool:
    """Terminal O of a carboxylate (C with two terminal O, one of them charged) or phosphate."""
    c = [n for n in atom.GetNeighbors() if n.GetAtomicNum() > 1][0]
    term = [
        n
        for n in c.GetNeighbors()
        if n.GetSymbol() == "O"
        and n.GetDegree() - n.GetTotalNumHs() == 1
        and n.GetTotalNumHs() == 0
    ]
    if c.GetSymbol() == "P":
        return atom in term or atom.GetIdx() in [t.GetIdx() for t in term]
    if c.GetSymbol() == "C" and len(term) == 2:
        return any(t.GetFormalCharge() < 0 for t in term)
    return False


def mol2_bond_type(bond, types: list[str]) -> str:
    from rdkit import Chem

    # Aromatic bonds are written with their Kekule orders (1/2) so that the file fixes every
    # bond order by itself; aromatic atoms keep their .ar SYBYL types.
    i, j = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
    if bond.GetBondType() == Chem.BondType.SINGLE:
        pair = {types[i], types[j]}
        if "N.am" in pair and "C.2" in pair:
            c = bond.GetBeginAtom() if types[i] == "C.2" else bond.GetEndAtom()
            if any(
                b.GetBondType() == Chem.BondType.DOUBLE and b.GetOtherAtom(c).GetSymbol() == "O"
                for b in c.GetBonds()
            ):
                return "am"
        return "1"
    return {Chem.BondType.DOUBLE: "2", Chem.BondType.TRIPLE: "3"}.get(bond.GetBondType(), "1")


def write_mol2(path: Path, mol, names: list[str], title: str, res_name: str, chain: str) -> None:
    from rdkit import Chem

    types = [sybyl_type(a) for a in mol.GetAtoms()]
    mol = Chem.Mol(mol)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    pos = mol.GetConformer().GetPositions()
    lines = [
        "@<TRIPOS>MOLECULE",
        title,
        f"{mol.GetNumAtoms():5d} {mol.GetNumBonds():5d}     1     0     0",
        "SMALL",
        "USER_CHARGES",
        "",
        "@<TRIPOS>ATOM",
    ]
    for k, a in enumerate(mol.GetAtoms()):
        x, y, z = pos[k]
        lines.append(
            f"{k + 1:7d} {names[k]:<6s} {x:10.4f} {y:10.4f} {z:10.4f} {types[k]:<6s} "
            f"{1:4d} {res_name:<8s} {float(a.GetFormalCharge()):8.4f}"
        )
    lines.append("@<TRIPOS>BOND")
    for k, b in enumerate(mol.GetBonds()):
        lines.append(
            f"{k + 1:6d} {b.GetBeginAtomIdx() + 1:5d} {b.GetEndAtomIdx() + 1:5d} {mol2_bond_type(b, types)}"
        )
    lines.append("@<TRIPOS>SUBSTRUCTURE")
    lines.append(
        f"{1:6d} {res_name:<8s} {1:5d} RESIDUE           1 {chain or '-':<4s} {res_name:<4s} 1 ROOT"
    )
    path.write_text("\n".join(lines) + "\n")


def write_sdf(path: Path, mol, title: str) -> None:
    from rdkit import Chem

    m = Chem.Mol(mol)
    m.SetProp("_Name", title)
    block = Chem.MolToMolBlock(m, kekulize=True)
    path.write_text(block + "$$$$\n")


def _pdb_name(name: str, element: str) -> str:
    if len(name) >= 4:
        return name[:4]
    if len(element) == 1:
        return f" {name:<3s}"
    return f"{name:<4s}"


def pocket_residues(st, lig_xyz: np.ndarray, cutoff: float = POCKET_CUTOFF):
    """(chain name, gemmi residue) of every amino-acid residue (standard, or a modified one the
    reader keeps: ``chemistry.modified``) with a heavy atom within ``cutoff`` Å of a ligand heavy
    atom (the chemistry layer's pocket cut), in file order."""
    residues, coords, keys = [], [], []
    for ch in st[0]:
        for res in ch:
            if res.name.strip() not in STANDARD_AMINO_ACIDS and not _kept_modified(res):
                continue
            heavy = [a.pos.tolist() for a in res if a.element.name not in ("H", "D")]
            coords.extend(heavy)
            keys.extend([len(residues)] * len(heavy))
            residues.append((ch.name, res))
    if not coords:
        return []
    return [
        residues[k] for k in pocket_residue_keys(np.array(coords), np.array(keys), lig_xyz, cutoff)
    ]


def _kept_modified(res) -> bool:
    """True for a modified amino acid the reader keeps in the pocket (``chemistry.modified``)."""
    heavy = [a.name for a in res if a.element.name not in ("H", "D")]
    name = res.name.strip()
    return bool(heavy) and looks_like_amino_acid(name, heavy) and not keep_reason(name, heavy)


def pocket_metals(st, lig_xyz: np.ndarray, cutoff: float = POCKET_CUTOFF):
    """(chain name, gemmi residue) of every metal ion (a one-atom hetero residue of a metal
    element) within ``cutoff`` Å of a ligand heavy atom, in file order (PDBbind pockets keep them)."""
    out = []
    for ch in st[0]:
        for res in ch:
            if len(res) == 1 and atom_element(res[0]) in METAL_ELEMENTS:
                if np.linalg.norm(lig_xyz - np.array(res[0].pos.tolist()), axis=1).min() <= cutoff:
                    out.append((ch.name, res))
    return out


def write_pocket(path: Path, residues, title: str, metals=()) -> int:
    """Pocket PDB: the residues as ATOM records, then the metal ions as HETATM records."""
    lines = [f"REMARK   1 {title}"]
    serial = 0
    prev_chain = None
    for chain, res in residues:
        if prev_chain is not None and chain != prev_chain:
            lines.append("TER")
        prev_chain = chain
        for a in res:
            serial += 1
            el = atom_element(a)
            lines.append(
                f"ATOM  {serial % 100000:5d} {_pdb_name(a.name.strip(), el)} {res.name.strip():>3s} "
                f"{(chain or ' ')[:1]}{res.seqid.num:4d}{(res.seqid.icode.strip() or ' ')}   "
                f"{a.pos.x:8.3f}{a.pos.y:8.3f}{a.pos.z:8.3f}{a.occ:6.2f}{a.b_iso:6.2f}          "
                f"{el.upper():>2s}"
            )
    lines.append("TER")
    for chain, res in metals:
        serial += 1
        a = res[0]
        el = atom_element(a)
        lines.append(
            f"HETATM{serial % 100000:5d} {_pdb_name(a.name.strip(), el)} {res.name.strip():>3s} "
            f"{(chain or ' ')[:1]}{res.seqid.num:4d}{(res.seqid.icode.strip() or ' ')}   "
            f"{a.pos.x:8.3f}{a.pos.y:8.3f}{a.pos.z:8.3f}{a.occ:6.2f}{a.b_iso:6.2f}          "
            f"{el.upper():>2s}"
        )
    lines.append("END")
    path.write_text("\n".join(lines) + "\n")
    return serial

"""Give PLIP and our detector the same hydrogens (the ``--hydrogens shared`` mode of ``hbond_report``).

Most complexes of the local sets carry no hydrogens on one side or both, so PLIP places its own
(Open Babel, rotatable OH/NH3+ at an arbitrary torsion) while our detector judges rotatable donors
without input hydrogens by heavy-atom angles: the two then disagree on hydrogen positions, not on
the H-bond rules. The issue's measurement (PDBbind files, PLIP with NOHYDRO) gives both sides the
same input hydrogens. This module makes a copy of a complex folder with explicit hydrogens that
both then read:

* pocket: the input's hydrogens where it has any; else Open Babel's polar hydrogens at pH 7.4
  (``OBMol.AddHydrogens(polaronly, correctForPH)``: Lys NH3+, Asp/Glu carboxylates), appended as
  ATOM records of their residue;
* ligand: the SDF's hydrogens where it has any; else the SDF at pH 7 (carboxylic, sulfonic and
  phosphoric acids deprotonated; aliphatic amines and amidine/guanidine groups protonated) with
  RDKit's hydrogens (``Chem.AddHs(addCoords=True)``), written into the SDF; the MOL2 is copied
  (it only names the heavy atoms).

The hydrogen positions are one arbitrary choice for rotatable groups, the same for both tools.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from misi_bench.builder.chemistry.hbond_typing import _ACID_OH, ionisable_groups
from misi_bench.builder.chemistry.ligand import ligand_from_rdkit, rdkit_mol_from_file

_AMINE = "[NX3;+0;!$(N-[!CX4;!#1])]"  # N with only sp3 C and H neighbours


def _has_h(pdb: Path) -> bool:
    return any(
        ln.startswith(("ATOM", "HETATM")) and ln[76:78].strip() in ("H", "D")
        for ln in pdb.read_text().splitlines()
    )


def protonated_pocket_lines(pdb: Path) -> list[str]:
    """ATOM records of the polar hydrogens Open Babel adds to ``pdb`` at pH 7.4."""
    from openbabel import pybel  # noqa: PLC0415 (optional dependency)

    mol = next(pybel.readfile("pdb", str(pdb)))
    n_before = mol.OBMol.NumAtoms()
    mol.OBMol.AddHydrogens(True, True, 7.4)
    lines = []
    per_residue: dict[tuple, int] = {}
    for k, atom in enumerate(mol.atoms):
        if k < n_before or atom.atomicnum != 1:
            continue
        res = atom.OBAtom.GetResidue()
        key = (res.GetChain(), res.GetNum(), res.GetName())
        per_residue[key] = per_residue.get(key, 0) + 1
        name = f"HX{per_residue[key]}"  # unique in the residue (readers key atoms by name)
        x, y, z = atom.coords
        lines.append(
            f"ATOM  {99999:5d} {name:<4s} {res.GetName():>3s} {res.GetChain()[:1] or ' '}{res.GetNum():4d}    "
            f"{x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00           H"
        )
    return lines


def protonated_ligand(sdf: Path):
    """RDKit molecule of the SDF at pH 7 with explicit hydrogens (see the module docstring)."""
    from rdkit import Chem  # noqa: PLC0415

    mol = rdkit_mol_from_file(sdf)
    if any(a.GetAtomicNum() == 1 for a in mol.GetAtoms()):
        return mol
    rw = Chem.RWMol(mol)
    for (o,) in [m[:1] for m in rw.GetSubstructMatches(Chem.MolFromSmarts(_ACID_OH))]:
        rw.GetAtomWithIdx(o).SetFormalCharge(-1)
        rw.GetAtomWithIdx(o).SetNumExplicitHs(0)
    for (n,) in rw.GetSubstructMatches(Chem.MolFromSmarts(_AMINE)):
        rw.GetAtomWithIdx(n).SetFormalCharge(1)
    amidine_n, _ = ionisable_groups(ligand_from_rdkit(mol, sdf))
    for i in sorted(amidine_n):  # the imine N of each group takes the proton
        atom = rw.GetAtomWithIdx(i)
        if atom.GetFormalCharge() == 0 and any(
            b.GetBondType() == Chem.BondType.DOUBLE for b in atom.GetBonds()
        ):
            atom.SetFormalCharge(1)
    for atom in rw.GetAtoms():
        atom.SetNoImplicit(False)
    mol = rw.GetMol()
    Chem.SanitizeMol(mol)
    return Chem.AddHs(mol, addCoords=True)


def _with_hydrogens(records: list[str], h_lines: list[str]) -> list[str]:
    """``records`` with each hydrogen line right after the last record of its residue (readers
    split a residue whose records are not contiguous)."""
    by_residue: dict[str, list[str]] = {}
    for ln in h_lines:
        by_residue.setdefault(ln[17:27], []).append(ln)
    last = {ln[17:27]: k for k, ln in enumerate(records) if ln.startswith(("ATOM", "HETATM"))}
    out = []
    for k, ln in enumerate(records):
        out.append(ln)
        if ln.startswith(("ATOM", "HETATM")) and last.get(ln[17:27]) == k:
            out.extend(by_residue.pop(ln[17:27], []))
    return out + [ln for rest in by_residue.values() for ln in rest]


def shared_h_copy(sample_dir: Path, out_root: Path) -> Path:
    """A copy of ``sample_dir`` under ``out_root`` whose pocket and ligand both carry hydrogens."""
    from rdkit import Chem  # noqa: PLC0415

    sample_dir = Path(sample_dir)
    pid = sample_dir.name.lower()
    out = Path(out_root) / pid
    out.mkdir(parents=True, exist_ok=True)
    pocket = sample_dir / f"{pid}_pocket.pdb"
    text = pocket.read_text().splitlines()
    if not _has_h(pocket):
        text = _with_hydrogens(
            [ln for ln in text if not ln.startswith(("END", "CONECT", "MASTER"))],
            protonated_pocket_lines(pocket),
        ) + ["END"]
    (out / f"{pid}_pocket.pdb").write_text("\n".join(text) + "\n")
    sdf = sample_dir / f"{pid}_ligand.sdf"
    title = sdf.read_text().splitlines()[0]
    mol = protonated_ligand(sdf)
    mol.SetProp("_Name", title)
    (out / f"{pid}_ligand.sdf").write_text(Chem.MolToMolBlock(mol) + "$$$$\n")
    shutil.copy(sample_dir / f"{pid}_ligand.mol2", out / f"{pid}_ligand.mol2")
    return out

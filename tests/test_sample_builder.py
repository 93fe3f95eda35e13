"""The sample builder (``scripts.make_samples``) uses the chemistry layer's readers, bond
perception and pocket cut; run on the committed sample files, those shared pieces and the
builder's writers must reproduce the committed files exactly (so a rebuild stays byte-identical)."""

from __future__ import annotations

import numpy as np
import pytest
from misi_bench.builder.chemistry.files import distance_bonds
from misi_bench.builder.chemistry.protein import read_structure
from misi_bench.builder.chemistry.samples import sample_index, sample_refs

from scripts.sample_ligands import read_mol2_atoms, read_sdf_atoms
from scripts.sample_writers import (
    pocket_residues,
    write_mol2,
    write_pocket,
    write_sdf,
)

REFS = sample_refs()


@pytest.mark.parametrize("ref", REFS, ids=[r.pdb_id for r in REFS])
def test_shared_readers_and_writers_reproduce_each_sample(ref, tmp_path):
    from rdkit import Chem

    pid = ref.pdb_id.lower()
    sdf, mol2, pocket = (
        ref.path / f"{pid}_ligand.sdf",
        ref.path / f"{pid}_ligand.mol2",
        ref.path / f"{pid}_pocket.pdb",
    )
    m2_atoms = read_mol2_atoms(mol2)
    sd_atoms = read_sdf_atoms(sdf)
    assert [a.element for a in m2_atoms] == [a.element for a in sd_atoms]
    assert np.allclose([a.xyz for a in m2_atoms], [a.xyz for a in sd_atoms], atol=1e-3)
    heavy = [a for a in m2_atoms if a.element not in ("H", "D")]
    xyz = np.array([a.xyz for a in heavy])

    # bond perception from distances finds exactly the ligand's heavy-atom bonds
    mol = Chem.MolFromMolFile(str(sdf), removeHs=False, sanitize=True)
    n_heavy = len(heavy)
    want = {
        tuple(sorted((b.GetBeginAtomIdx(), b.GetEndAtomIdx())))
        for b in mol.GetBonds()
        if b.GetBeginAtomIdx() < n_heavy and b.GetEndAtomIdx() < n_heavy
    }
    assert set(distance_bonds(xyz, [a.element for a in heavy])) == want

    # the pocket cut of the pocket keeps every residue; the writer reproduces the file
    st = read_structure(pocket)
    residues = pocket_residues(st, xyz)
    assert len(residues) == sum(1 for ch in st[0] for _ in ch)
    title = pocket.read_text().splitlines()[0][len("REMARK   1 ") :]
    write_pocket(tmp_path / "pocket.pdb", residues, title)
    assert (tmp_path / "pocket.pdb").read_bytes() == pocket.read_bytes()

    # the ligand writers reproduce the SDF and MOL2 from the molecule and the MOL2 names
    row = next(r for r in sample_index() if r["pdb_id"].lower() == pid)
    sdf_title = sdf.read_text().splitlines()[0]
    write_sdf(tmp_path / "l.sdf", mol, sdf_title)
    assert (tmp_path / "l.sdf").read_bytes() == sdf.read_bytes()
    write_mol2(
        tmp_path / "l.mol2",
        mol,
        [a.name for a in m2_atoms],
        sdf_title,
        row["ligand_code"],
        row["ligand_chain"],
    )
    # (RDKit's SDF reader may store a bond's two atoms in the other direction)
    assert _undirected((tmp_path / "l.mol2").read_text()) == _undirected(mol2.read_text())


def _undirected(mol2_text: str) -> list[str]:
    """MOL2 lines with each BOND record's two atom numbers in ascending order."""
    out, section = [], ""
    for line in mol2_text.splitlines():
        if line.startswith("@<TRIPOS>"):
            section = line
        elif section == "@<TRIPOS>BOND":
            num, a, b, kind = line.split()
            a, b = sorted((int(a), int(b)))
            line = f"{num} {a} {b} {kind}"
        out.append(line)
    return out

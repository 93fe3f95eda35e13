"""The embedded sample set: index, file layout, ligand chemistry, pocket geometry, raw entries."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from misi_bench.builder.chemistry.samples import sample_index, sample_refs, sample_root

from scripts.fixtures import FIXTURE_ROOT, raw_index, raw_refs

REFS = sample_refs()
IDS = [r.pdb_id for r in REFS]


def read_mol2(path):
    """Minimal MOL2 reader: [(name, element, xyz, subst_id)], [(i, j, type)]."""
    atoms, bonds, section = [], [], None
    for line in path.read_text().splitlines():
        s = line.strip()
        if s.startswith("@<TRIPOS>"):
            section = s[9:]
            continue
        if not s:
            continue
        f = s.split()
        if section == "ATOM":
            el = f[5].split(".")[0]
            atoms.append((f[1], el, np.array([float(f[2]), float(f[3]), float(f[4])]), int(f[6])))
        elif section == "BOND":
            bonds.append((int(f[1]) - 1, int(f[2]) - 1, f[3]))
    return atoms, bonds


def read_pocket(path):
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith(("ATOM", "HETATM")):
            el = line[76:78].strip()
            rows.append(
                (
                    line[17:20].strip(),
                    el,
                    np.array([float(line[30:38]), float(line[38:46]), float(line[46:54])]),
                )
            )
    return rows


def sdf_mol(ref):
    from rdkit import Chem

    pid = ref.pdb_id.lower()
    mol = Chem.MolFromMolFile(str(ref.path / f"{pid}_ligand.sdf"), removeHs=False, sanitize=True)
    assert mol is not None, f"{ref.pdb_id}: RDKit cannot sanitise the ligand SDF"
    return mol


def test_index_lists_enough_complexes():
    rows = sample_index()
    assert len(rows) >= 15
    assert len({r["pdb_id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["ligand_code"] and r["source_package"] and r["source_version"] and r["source_path"]
    assert (sample_root() / "PROVENANCE.md").is_file()


def test_refs_are_pdbbind_kind():
    assert all(r.kind == "pdbbind" and r.ligand_code for r in REFS)
    assert "1a28" in IDS and all(i == i.lower() for i in IDS)


@pytest.mark.parametrize("ref", REFS, ids=IDS)
def test_three_files_present(ref):
    pid = ref.pdb_id.lower()
    assert ref.path.is_dir()
    for suffix in ("_pocket.pdb", "_ligand.sdf", "_ligand.mol2"):
        assert (ref.path / f"{pid}{suffix}").is_file()
    assert ref.path.name == pid


@pytest.mark.parametrize("ref", REFS, ids=IDS)
def test_sdf_and_mol2_agree(ref):
    mol = sdf_mol(ref)
    atoms, bonds = read_mol2(ref.path / f"{ref.pdb_id.lower()}_ligand.mol2")
    pos = mol.GetConformer().GetPositions()
    assert len(atoms) == mol.GetNumAtoms()
    assert len(bonds) == mol.GetNumBonds()
    sdf_heavy = [(a.GetSymbol(), pos[a.GetIdx()]) for a in mol.GetAtoms() if a.GetAtomicNum() > 1]
    mol2_heavy = [(el, xyz) for _, el, xyz, _ in atoms if el not in ("H", "D")]
    assert len(sdf_heavy) == len(mol2_heavy) > 0
    for (e1, x1), (e2, x2) in zip(sdf_heavy, mol2_heavy):  # same atoms, same order
        assert e1.upper() == e2.upper()
        assert np.linalg.norm(x1 - x2) < 1e-3
    names = [n for n, *_ in atoms]
    assert len(set(names)) == len(names), "ligand atom names must be unique"
    # the MOL2's bond orders give the same molecule as the SDF
    from rdkit import Chem

    orders = {"1": 1.0, "am": 1.0, "2": 2.0, "3": 3.0}
    for i, j, t in bonds:
        b = mol.GetBondBetweenAtoms(i, j)
        assert b is not None, f"MOL2 bond {i + 1}-{j + 1} absent from the SDF"
        if b.GetBondType() != Chem.BondType.AROMATIC and t != "ar":  # aromatic: Kekule may differ
            assert orders[t] == b.GetBondTypeAsDouble()


@pytest.mark.parametrize("ref", REFS, ids=IDS)
def test_mol2_parses_with_rdkit(ref):
    from rdkit import Chem

    m = Chem.MolFromMol2File(
        str(ref.path / f"{ref.pdb_id.lower()}_ligand.mol2"), removeHs=False, sanitize=False
    )
    assert m is not None and m.GetNumAtoms() == sdf_mol(ref).GetNumAtoms()


@pytest.mark.parametrize("ref", REFS, ids=IDS)
def test_ligand_sits_in_pocket(ref):
    mol = sdf_mol(ref)
    pos = mol.GetConformer().GetPositions()
    lig = np.array([pos[a.GetIdx()] for a in mol.GetAtoms() if a.GetAtomicNum() > 1])
    pocket = read_pocket(ref.path / f"{ref.pdb_id.lower()}_pocket.pdb")
    assert len(pocket) >= 50
    assert not any(res in ("HOH", "WAT") for res, _, _ in pocket), "no waters in the pocket"
    heavy = np.array([xyz for _, el, xyz in pocket if el not in ("H", "D")])
    d = np.linalg.norm(lig[:, None, :] - heavy[None, :, :], axis=-1)
    nearest = d.min(axis=1)
    assert nearest.max() < 6.0, "every ligand atom has protein nearby"
    assert nearest.min() > 2.0, "no ligand atom overlaps the protein"
    # the pocket surrounds the ligand: protein on both sides along each axis
    centre = lig.mean(axis=0)
    for axis in range(3):
        assert (heavy[:, axis] < centre[axis]).any() and (heavy[:, axis] > centre[axis]).any()
    # pocket = whole residues, none far from the ligand
    assert d.min(axis=0).min() < 4.5
    assert d.min() < 4.5


@pytest.mark.parametrize("ref", REFS, ids=IDS)
def test_bond_orders_are_sane(ref):
    from rdkit import Chem

    mol = sdf_mol(ref)
    assert sum(1 for a in mol.GetAtoms() if a.GetAtomicNum() > 1) >= 8, "drug-like ligand"
    assert all(a.GetNumRadicalElectrons() == 0 for a in mol.GetAtoms())
    assert any(b.GetBondType() != Chem.BondType.SINGLE for b in mol.GetBonds())
    assert Chem.MolToSmiles(mol)
    # heavy-atom bond lengths are chemical
    pos = mol.GetConformer().GetPositions()
    for b in mol.GetBonds():
        if b.GetBeginAtom().GetAtomicNum() > 1 and b.GetEndAtom().GetAtomicNum() > 1:
            length = np.linalg.norm(pos[b.GetBeginAtomIdx()] - pos[b.GetEndAtomIdx()])
            assert 1.0 < length < 2.2


def test_some_samples_have_hydrogens():
    from rdkit import Chem

    with_h_ligand = [
        r.pdb_id for r in REFS if any(a.GetAtomicNum() == 1 for a in sdf_mol(r).GetAtoms())
    ]
    with_h_pocket = [
        r.pdb_id
        for r in REFS
        if any(el == "H" for _, el, _ in read_pocket(r.path / f"{r.pdb_id.lower()}_pocket.pdb"))
    ]
    assert with_h_ligand, "at least one ligand file carries hydrogens"
    assert with_h_pocket, "at least one pocket carries hydrogens"
    assert Chem  # rdkit available


def test_the_package_data_holds_only_the_samples():
    """The wheel ships ``builder/data/samples`` (what ``--source samples`` builds) and no test
    fixture: the raw entries and held-out sets live in the checkout's ``tests/data``."""
    package_data = sample_root().parent
    assert sorted(p.name for p in package_data.iterdir()) == ["samples"]
    assert sorted(p.name for p in FIXTURE_ROOT.iterdir() if p.is_dir()) == [
        "copies",
        "heldout",
        "raw",
    ]
    assert all(r.path.is_relative_to(FIXTURE_ROOT) for r in raw_refs())


def test_raw_entries_exist():
    rows = raw_index()
    refs = raw_refs()
    assert len(rows) == len(refs) >= 3
    kinds = set()
    for ref in refs:
        assert ref.kind == "raw" and ref.ligand_code
        assert ref.path.is_file() and ref.path.name.endswith(".gz")
        text = gzip.decompress(ref.path.read_bytes()).decode("utf-8", errors="replace")
        assert ref.pdb_id.upper() in text[:2000].upper()
        assert ref.ligand_code in text
        kinds.add("cif" if text.lstrip().startswith("data_") else "pdb")
    assert kinds == {"cif", "pdb"}

"""Modified residues inside a chain (builder/chemistry/modified.py): kept in the pocket under their
own names, typed from their chemical component, bonds kept; a left-out one is named with a reason."""

import gzip
import logging
import shutil

import numpy as np
import pytest
from misi_bench.builder.chemistry.hbonds import detect_hbonds
from misi_bench.builder.chemistry.modified import parent_of, residue_roles, residue_types
from misi_bench.builder.chemistry.structure import read_pdbbind_dir, read_raw_entry

MODES = ("chimerax", "plip")


def _rename(path, old, new, number, chains=None):
    """Rewrite residue ``old`` ``number`` of ``path`` as HETATM ``new`` (how the PDB writes a
    modified residue, e.g. 1HVR's ILE 50 as IIL)."""
    lines = []
    for ln in path.read_text().splitlines():
        if (
            ln.startswith("ATOM")
            and ln[17:20] == old
            and ln[22:26].strip() == str(number)
            and (chains is None or ln[21] in chains)
        ):
            ln = "HETATM" + ln[6:17] + new + ln[20:]
        lines.append(ln)
    path.write_text("\n".join(lines) + "\n")


def _bond_keys(cx, mode):
    return {
        (h.chain, h.res_number, h.protein_atom_name, h.ligand_atom_name, h.donor_side): h.res_name
        for h in detect_hbonds(cx, mode)
    }


@pytest.fixture(scope="module")
def hvr_iil(sample_refs, tmp_path_factory):
    """The 1HVR sample with ILE 50 of both chains written as IIL, as the PDB entry writes it."""
    src = next(r for r in sample_refs if r.pdb_id == "1hvr").path
    d = tmp_path_factory.mktemp("iil") / "1hvr"
    shutil.copytree(src, d)
    _rename(d / "1hvr_pocket.pdb", "ILE", "IIL", 50)
    return read_pdbbind_dir(src), read_pdbbind_dir(d)


def test_iil_50_stays_in_the_pocket_under_its_own_name(hvr_iil):
    plain, modified = hvr_iil
    labels = {(r.chain, r.label) for r in modified.residues}
    assert {("A", "IIL 50"), ("B", "IIL 50")} <= labels
    assert len(modified.residues) == len(plain.residues)
    iil = np.flatnonzero(modified.res_names == "IIL")
    ile = np.flatnonzero((plain.res_names == "ILE") & (plain.res_numbers == 50))
    assert modified.atom_types[iil].tolist() == plain.atom_types[ile].tolist()
    assert modified.is_donor[iil].tolist() == plain.is_donor[ile].tolist()
    assert modified.is_acceptor[iil].tolist() == plain.is_acceptor[ile].tolist()


@pytest.mark.parametrize("mode", MODES)
def test_a_modified_residue_that_bonds_the_ligand_keeps_its_bond(hvr_iil, mode):
    plain, modified = hvr_iil
    before, after = _bond_keys(plain, mode), _bond_keys(modified, mode)
    assert set(before) == set(after), "same bonds, atom for atom"
    moved = {k: v for k, v in after.items() if v != before[k]}
    assert len(moved) == 2 and set(moved.values()) == {"IIL"}, moved
    assert {(k[0], k[1], k[2]) for k in moved} == {("A", 50, "N"), ("B", 50, "N")}


def test_a_residue_left_out_is_named_with_its_reason(sample_refs, tmp_path, caplog):
    """ILE atoms under the name MSE do not match MSE's component: left out, with a WARNING."""
    src = next(r for r in sample_refs if r.pdb_id == "1hvr").path
    d = tmp_path / "1hvr"
    shutil.copytree(src, d)
    _rename(d / "1hvr_pocket.pdb", "ILE", "MSE", 50, chains="A")
    with caplog.at_level(logging.WARNING):
        cx = read_pdbbind_dir(d)
    assert "MSE 50" not in {r.label for r in cx.residues}
    lines = [r.getMessage() for r in caplog.records if "MSE 50" in r.getMessage()]
    assert lines and "left out of the pocket" in lines[0]
    assert "CD1, CG1, CG2 are not in component MSE" in lines[0]


def test_the_raw_reader_keeps_a_modified_leucine(raw_refs, tmp_path):
    """LEU 715 of 1A28 written as MLE (N-methylleucine, parent LEU) stays, bonds unchanged."""
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    path = tmp_path / "1a28_mle.pdb"
    path.write_text(text)
    _rename(path, "LEU", "MLE", 715)
    full = read_raw_entry(raw_refs["1a28"].path, "STR")
    cx = read_raw_entry(path, "STR")
    assert "MLE 715" in {r.label for r in cx.residues}
    assert len(cx.residues) == len(full.residues)
    for mode in MODES:
        assert set(_bond_keys(cx, mode)) == set(_bond_keys(full, mode))


def test_parents_from_the_component_dictionary():
    assert [parent_of(c) for c in ("MSE", "PTR", "SEP", "TPO", "CSO", "IIL")] == [
        "MET",
        "TYR",
        "SER",
        "THR",
        "CYS",
        "ILE",
    ]
    assert parent_of("XK2") == "" and parent_of("HOH") == "" and parent_of("NAP") == ""


def _typed(code, names, input_h=None):
    input_h = input_h if input_h is not None else [None] * len(names)
    return dict(zip(names, residue_types(code, names, input_h)))


def test_phosphoresidues_are_typed_from_their_own_component():
    """SEP's OG is a phosphate ester (no H: an acceptor, never the parent SER's donor); the
    phosphate O of a crystal file without hydrogens are O3- (ChimeraX's long-P-O rule may make
    one an OH later)."""
    names = ["N", "CA", "C", "O", "CB", "OG", "P", "O1P", "O2P", "O3P"]
    sep = _typed("SEP", names)
    assert sep["OG"] == ("O3", 0) and sep["P"][0] == "Pac"
    assert [sep[n] for n in ("O1P", "O2P", "O3P")] == [("O3-", 0)] * 3
    assert sep["N"] == ("Npl", 1) and sep["C"] == ("C2", 0) and sep["O"] == ("O2", 0)
    roles = dict(
        zip(
            names,
            residue_roles(
                ["N", "C", "C", "O", "C", "O", "P", "O", "O", "O"], [sep[n] for n in names]
            ),
        )
    )
    assert roles["OG"] == (False, True, 0) and roles["N"] == (True, False, 1)
    ptr = _typed("PTR", ["N", "CA", "C", "O", "CB", "CG", "CD1", "CE1", "CZ", "OH", "P"])
    assert ptr["CG"][0] == "Car" and ptr["OH"] == ("O3", 0)


def test_hydroxyls_and_input_hydrogens():
    cso = _typed("CSO", ["N", "CA", "CB", "SG", "C", "O", "OD"])
    assert cso["OD"] == ("O3", 1) and cso["SG"][0] == "S3"
    # with hydrogens in the input, the input's count on each atom is used
    with_h = _typed("SEP", ["N", "CA", "OG", "P", "O1P", "O2P", "O3P"], [1, 0, 0, 0, 0, 1, 0])
    assert with_h["O2P"] == ("O3", 1) and with_h["O1P"] == ("O3-", 0)
    # a C-terminal residue keeps OXT: carboxylate
    cterm = _typed("MSE", ["N", "CA", "C", "O", "OXT", "CB", "CG", "SE", "CE"])
    assert cterm["C"][0] == "Cac" and cterm["OXT"][0] == "O2-" and cterm["O"][0] == "O2-"

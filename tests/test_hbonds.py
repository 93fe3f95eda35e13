"""Hydrogen bonds: known bonds of real complexes, typing, geometry criteria, answer formats.

These are the ``plip`` mode's tests (the rule they were written for, with its options);
``test_hbond_classes`` and ``test_hbond_modes`` cover the default ``chimerax`` mode."""

import dataclasses

import numpy as np
from misi_bench.builder.chemistry.hbonds import (
    MAX_DISTANCE,
    format_pocket_answer,
    format_residue_answer,
)
from misi_bench.builder.chemistry.hbonds import detect_plip_hbonds as detect_hbonds
from misi_bench.builder.chemistry.structure import ligand_polarity, protein_polarity


def test_progesterone_receptor_known_bonds(complexes):
    """1A28: progesterone's O3 is bound by GLN 725 and ARG 766 (the paper's example)."""
    bonds = detect_hbonds(complexes["1a28"])
    texts = {b.pocket_text() for b in bonds}
    assert "GLN 725 NE2 A, O3" in texts
    assert any(t.startswith("ARG 766 ") and t.endswith(", O3") for t in texts)


def test_hiv_protease_catalytic_aspartates(complexes):
    """1HVR: the cyclic-urea inhibitor's diol sits between the two catalytic ASP 25."""
    bonds = detect_hbonds(complexes["1hvr"])
    asp = {
        (b.chain, b.res_name, b.res_number)
        for b in bonds
        if b.res_name == "ASP" and b.res_number == 25
    }
    assert len(asp) == 2  # both chains


def test_all_samples_bonds_are_geometrically_valid(complexes):
    total = 0
    for pdb_id, cx in complexes.items():
        bonds = detect_hbonds(cx)
        total += len(bonds)
        assert list(bonds) == sorted(bonds), pdb_id
        for b in bonds:
            d = np.linalg.norm(cx.coords[b.protein_atom] - cx.coords[b.ligand_atom])
            assert d <= MAX_DISTANCE + 1e-9
            assert cx.is_ligand[b.ligand_atom] and not cx.is_ligand[b.protein_atom]
            donor, acceptor = (
                (b.protein_atom, b.ligand_atom)
                if b.donor_side == "protein"
                else (b.ligand_atom, b.protein_atom)
            )
            assert cx.is_donor[donor] and cx.is_acceptor[acceptor]
    assert total >= 30  # real complexes have bonds


def test_distance_threshold_matters(complexes):
    cx = complexes["1a28"]
    assert len(detect_hbonds(cx, max_distance=2.0)) < len(detect_hbonds(cx))


def test_neighbour_angle_criterion_rejects_bad_geometry(complexes):
    cx = complexes["1a28"]
    strict = detect_hbonds(cx, min_neighbour_angle=150.0)
    assert len(strict) < len(detect_hbonds(cx))


def test_hydrogen_angle_used_when_hydrogens_known(complexes):
    with_h = [cx for cx in complexes.values() if len(cx.h_coords)]
    assert with_h, "a protonated sample exists"
    cx = with_h[0]
    base = detect_hbonds(cx)
    # moving every hydrogen onto the far side of its donor breaks the D-H...A angle for fixed N-H donors
    flipped = cx.coords[cx.h_parent] - (cx.h_coords - cx.coords[cx.h_parent])
    cx2 = dataclasses.replace(cx, h_coords=flipped)
    assert len(detect_hbonds(cx2)) <= len(base)


def test_protein_table():
    assert protein_polarity("SER", "OG") == (True, True)
    assert protein_polarity("PRO", "N") == (False, False)
    assert protein_polarity("ALA", "N") == (True, False)
    assert protein_polarity("ASP", "OD2") == (False, True)
    assert protein_polarity("LEU", "CD1") == (False, False)


def test_ligand_typing_from_chemistry(complexes):
    cx = complexes["1a28"]
    lig = cx.ligand_indices
    typed = {str(cx.atom_names[i]): (bool(cx.is_donor[i]), bool(cx.is_acceptor[i])) for i in lig}
    assert typed["O3"] == (False, True)  # ketone: acceptor only
    assert typed["O20"] == (False, True)
    assert not any(d or a for name, (d, a) in typed.items() if name.startswith("C"))


def test_answer_formats(complexes):
    bonds = detect_hbonds(complexes["1a28"])
    text = format_pocket_answer(bonds)
    assert text.split("; ")[0].count(",") == 1 and text.startswith("GLN 725 NE2 A, O3")
    assert format_pocket_answer(()) == "None"
    gln = [b for b in bonds if b.res_name == "GLN"]
    assert format_residue_answer(gln) == "Yes: GLN NE2, O3"
    assert format_residue_answer([]) == "No"


def test_ligand_polarity_amide_and_charged_n():
    from misi_bench.builder.chemistry.structure import LigandData

    # N-methylacetamide heavy atoms: C(methyl)-C(=O)-N(H)-C ; plus a quaternary ammonium N+
    lig = LigandData(
        coords=np.zeros((6, 3)),
        elements=["C", "C", "O", "N", "C", "N"],
        names=list("abcdef"),
        charges=[0, 0, 0, 0, 0, 1],
        bonds=[[0, 1], [1, 2], [1, 3], [3, 4]],
        orders=[1, 2, 1, 1],
        n_hydrogens=[3, 0, 0, 1, 3, 4],
        aromatic=[False] * 6,
        h_coords=[],
        h_parent=[],
        residue_name="NMA",
        source="test",
    )
    donor, acceptor = ligand_polarity(lig)
    assert donor[3] and not acceptor[3]  # amide N: donor, not acceptor
    assert acceptor[2] and not donor[2]  # carbonyl O
    assert donor[5] and not acceptor[5]  # ammonium: no lone pair

"""The H-bond detector's fixes of issue 17, each on a real complex (embedded samples, the held-out
set in tests/data/heldout, and its raw 1GBT entry). Every test here fails with the 0.1 detector.
They hold for the ``plip`` mode (the rule they were written for; ``test_hbond_modes`` covers the
``chimerax`` mode)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from misi_bench.builder.chemistry import hbonds
from misi_bench.builder.chemistry.hbonds import MAX_DISTANCE
from misi_bench.builder.chemistry.hbonds import detect_plip_hbonds as detect_hbonds
from misi_bench.builder.chemistry.structure import read_pdbbind_dir, read_raw_entry

from scripts.fixtures import fixture_root

HELDOUT = fixture_root("heldout")


def _texts(cx) -> set[str]:
    return {b.pocket_text() for b in detect_hbonds(cx)}


def _atom(cx, name: str, res: tuple[str, int, str] | None = None) -> int:
    if res is None:
        return int(next(i for i in cx.ligand_indices if cx.atom_names[i] == name))
    return int(
        next(
            i
            for i in cx.pocket_indices
            if cx.atom_names[i] == name
            and cx.res_names[i] == res[0]
            and cx.res_numbers[i] == res[1]
            and cx.chain_ids[i] == res[2]
        )
    )


@pytest.fixture(scope="module")
def haem():
    return read_pdbbind_dir(HELDOUT / "19hc")


def test_metal_bridged_pairs_are_not_hbonds(haem):
    """19HC: the haem iron is bound by HIS 37 NE2, HIS 51 NE2 and the four haem N. Even typed as
    acceptors and with every angle allowed, a His N and a haem N that share the iron are no H-bond."""
    cx = haem
    fe = int(next(i for i in cx.ligand_indices if cx.elements[i] == "Fe"))
    shell = {
        i
        for i in range(cx.n_atoms)
        if np.linalg.norm(cx.coords[i] - cx.coords[fe]) <= 2.5 and i != fe
    }
    names = {(str(cx.res_names[i]), str(cx.atom_names[i])) for i in shell}
    assert {("HIS", "NE2"), ("HEM", "NA"), ("HEM", "NB"), ("HEM", "NC"), ("HEM", "ND")} <= names
    acceptor = cx.is_acceptor.copy()
    acceptor[[i for i in shell if cx.is_ligand[i]]] = True
    forced = dataclasses.replace(cx, is_acceptor=acceptor)
    found = {
        (b.protein_atom, b.ligand_atom)
        for b in detect_hbonds(forced, min_dha=0.0, min_neighbour_angle=0.0)
    }
    his = [i for i in shell if not cx.is_ligand[i]]
    haem_n = [i for i in shell if cx.is_ligand[i]]
    close = [
        (p, lg)
        for p in his
        for lg in haem_n
        if np.linalg.norm(cx.coords[p] - cx.coords[lg]) <= MAX_DISTANCE
    ]
    assert close, "His NE2 and haem N are within H-bond distance"
    assert not found & set(close)


def test_metal_ions_are_kept_labelled_and_drawn():
    """1GBT (raw mmCIF): its calcium ion, 20.5 Å from the ligand, is a pocket-side atom of the
    record (no residue) when the cutoff reaches it, and is drawn in its element colour."""
    from misi_bench.builder.scene.cache import render_png
    from misi_bench.builder.scene.camera import fit_camera
    from misi_bench.builder.scene.projection import projected_atoms
    from misi_bench.builder.scene.requests import ELEMENT_COLOURS, RenderRequest
    from misi_bench.builder.scene.shading import atom_colours

    cx = read_raw_entry(HELDOUT / "raw" / "1GBT.cif.gz", "GBS", pocket_cutoff=21.0)
    ions = [i for i in range(cx.n_atoms) if cx.res_names[i] == "CA" and cx.residue_index[i] == -1]
    assert len(ions) == 1 and cx.atom_names[ions[0]] == "Ca" and not cx.is_ligand[ions[0]]
    assert not cx.is_donor[ions[0]] and not cx.is_acceptor[ions[0]]
    assert tuple(atom_colours(cx, np.array(ions))[0]) == ELEMENT_COLOURS["CA"]
    atoms = tuple(range(cx.n_atoms))
    request = RenderRequest(atoms=atoms, camera=fit_camera(cx.screen_coords))
    _, _, visible = projected_atoms(cx, request)
    assert visible[ions[0]]
    assert render_png(cx, request)[:4] == b"\x89PNG"
    assert len(read_raw_entry(HELDOUT / "raw" / "1GBT.cif.gz", "GBS").pocket_indices) < len(
        cx.pocket_indices
    )


def test_input_hydrogens_on_rotatable_donors_are_used(complexes):
    """1QBS: the ligand MOL2 carries the diol's hydroxyl H. ASP 25 OD2 A sits 2.6-3.1 Å from O4,
    but O4's hydrogen points away (D-H...A below 100 degrees): not a bond."""
    cx = complexes["1qbs"]
    o4, od2 = _atom(cx, "O4"), _atom(cx, "OD2", ("ASP", 25, "A"))
    hs = [k for k, p in enumerate(cx.h_parent) if p == o4]
    assert hs, "the input gives O4's hydrogen"
    assert max(hbonds._angle(cx.coords[o4], cx.h_coords[k], cx.coords[od2]) for k in hs) < 100
    assert "ASP 25 OD2 A, O4" not in _texts(cx)
    for b in detect_hbonds(cx):
        donor = b.ligand_atom if b.donor_side == "ligand" else b.protein_atom
        acceptor = b.protein_atom if b.donor_side == "ligand" else b.ligand_atom
        known = [k for k, p in enumerate(cx.h_parent) if p == donor]
        if known:
            assert (
                max(
                    hbonds._angle(cx.coords[donor], cx.h_coords[k], cx.coords[acceptor])
                    for k in known
                )
                >= 100
            )


def test_guanidine_follows_chemistry_not_the_drawn_tautomer():
    """1GBT: 4-guanidinobenzoate's guanidine is a cation (pKa 13.5) whatever tautomer the SDF
    draws: its three N are donors and no acceptor, and it binds ASP 189 bidentately (NH1-OD1, NH2-OD2)."""
    cx = read_pdbbind_dir(HELDOUT / "1gbt")
    for name in ("NE", "NH1", "NH2"):
        i = _atom(cx, name)
        assert cx.is_donor[i] and not cx.is_acceptor[i], name
    texts = _texts(cx)
    assert {"ASP 189 OD1 A, NH1", "ASP 189 OD2 A, NH2"} <= texts


def test_a_known_hydrogen_bonds_every_acceptor_it_points_at():
    """1GBT: the guanidinium's in-plane hydrogens (placed from the planar frame) point at both
    carboxylate O of ASP 189 (three-centre bonds, D-H...A >= 100 degrees to each); the 0.2 rule
    kept only the acceptor nearest each hydrogen and dropped OD2-NH1 (3.1 Å), which PLIP also
    finds with its own hydrogens. A donor with unknown hydrogens stays limited to their count."""
    cx = read_pdbbind_dir(HELDOUT / "1gbt")
    texts = _texts(cx)
    assert {"ASP 189 OD1 A, NH1", "ASP 189 OD2 A, NH1", "ASP 189 OD2 A, NH2"} <= texts
    assert "ASP 189 OD2 A, NH1" not in {
        b.pocket_text() for b in detect_hbonds(cx, one_per_hydrogen="all")
    }
    with pytest.raises(ValueError, match="one_per_hydrogen"):
        detect_hbonds(cx, one_per_hydrogen="yes")


def test_histidine_tautomer_follows_input_hydrogens(complexes):
    """5WIU (protonated protein): HIS 414 carries its H on one ring N only; that N is a donor and
    not an acceptor, the other an acceptor only, so the ligand's OAD acceptor finds no His donor."""
    cx = complexes["5wiu"]
    for name in ("ND1", "NE2"):
        i = _atom(cx, name, ("HIS", 414, "A"))
        has_h = any(p == i for p in cx.h_parent)
        assert (bool(cx.is_donor[i]), bool(cx.is_acceptor[i])) == (has_h, not has_h)
    assert "HIS 414 NE2 A, OAD" not in _texts(cx)


def test_ligand_typing_follows_rdkit_feature_definitions(complexes):
    """RDKit BaseFeatures.fdef: aromatic amino N (1IA1 N7, N12) donate and do not accept; ring N
    without H accept; carboxylate O (1US0 O33, O34) accept; halogens (1US0 F9) are not counted."""
    cx = complexes["1ia1"]
    for name in ("N7", "N12"):
        i = _atom(cx, name)
        assert cx.is_donor[i] and not cx.is_acceptor[i], name
    for name in ("N4", "N6"):
        i = _atom(cx, name)
        assert cx.is_acceptor[i] and not cx.is_donor[i], name
    us0 = complexes["1us0"]
    assert all(us0.is_acceptor[_atom(us0, n)] for n in ("O33", "O34"))
    assert not us0.is_acceptor[_atom(us0, "F9")]


def test_one_hbond_per_unknown_donor_hydrogen(complexes):
    """1HVR: each diol OH has one hydrogen whose position the input does not give, so it donates
    to one of the catalytic aspartates' four carboxylate O (the 0.1 detector listed four partners
    for O4); on every sample no donor without known hydrogens exceeds its hydrogen count."""
    bonds = detect_hbonds(complexes["1hvr"])
    assert sum(1 for b in bonds if b.ligand_atom_name == "O4" and b.res_name == "ASP") <= 1
    for pdb_id, cx in complexes.items():
        per_donor: dict[int, int] = {}
        for b in detect_hbonds(cx):
            donor = b.ligand_atom if b.donor_side == "ligand" else b.protein_atom
            if hbonds.donor_hydrogen_source(cx, donor) != "unknown":
                continue  # known or placed hydrogens: three-centre bonds allowed
            per_donor[donor] = per_donor.get(donor, 0) + 1
        for donor, n in per_donor.items():
            assert n <= max(int(cx.donor_h[donor]), 1), (pdb_id, str(cx.atom_names[donor]))


def test_distance_limit_is_4_1_angstrom(haem):
    """19HC (held-out): CYS 59 N donates to the haem propionate O1D 4.05 Å away with its peptide
    H pointing at it (a PLIP bond); the 0.2 limit of 3.9 Å lost it. No bond is longer than 4.1 Å."""
    bonds = {b.pocket_text(): b for b in detect_hbonds(haem)}
    assert MAX_DISTANCE == pytest.approx(4.1)
    assert 3.9 < bonds["CYS 59 N A, O1D"].distance <= 4.1
    assert "CYS 59 N A, O1D" not in {b.pocket_text() for b in detect_hbonds(haem, max_distance=3.9)}
    assert all(b.distance <= 4.1 for b in bonds.values())


def test_question_text_states_the_detector_rule():
    """T4 and T9 tell the model the distance limit the detector uses, the angle, the three-centre
    rule and the metal exclusion (the plip mode's sentence, which both templates include)."""
    from misi_bench.builder.tasks.data import task_profile

    for task in ("residue_ligand", "pocket_ligand"):
        data = task_profile(task, "explicit")
        assert "{hbond_rule}" in data.prompt, task
        text = " ".join(data.hbond_rules["plip"].split())
        limits = {float(x) for x in re.findall(r"at most (\d+\.\d+) Å", text)}
        assert limits == {round(MAX_DISTANCE, 1)}, task
        assert "metal" in text, task
        assert f"at least {hbonds.MIN_DHA_ANGLE:g}°" in text and "two acceptors" in text, task

"""The two H-bond modes on the real embedded complexes: frozen truths of both, the chimerax
mode's typing of standard residues, MOL2 hydrogens, rotatable-H robustness, bad input and the
mode's place in the build identity."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from misi_bench.builder.chemistry import mills_dean as md
from misi_bench.builder.chemistry.hbond_rotamers import rotamer_sensitive, rotatable_donors
from misi_bench.builder.chemistry.hbonds import (
    HBOND_MODES,
    chimerax_graph,
    chimerax_hydrogens,
    detect_hbonds,
)
from misi_bench.builder.chemistry.structure import load_complex, read_pdbbind_dir
from misi_bench.builder.core.errors import InputError, MisiError

SNAPSHOT = Path(__file__).parent / "snapshots" / "hbonds_modes.json"


@pytest.fixture(scope="module")
def truths(complexes):
    return {
        mode: {
            p: [b.pocket_text() for b in detect_hbonds(cx, mode)]
            for p, cx in sorted(complexes.items())
        }
        for mode in HBOND_MODES
    }


def test_sample_truths_in_both_modes_are_frozen(truths):
    """Every sample's bonds in both modes (docs/hbonds.md lists and explains each difference);
    an intended change reruns with MISI_UPDATE_SNAPSHOTS=1."""
    if os.environ.get("MISI_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(truths, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert json.loads(SNAPSHOT.read_text(encoding="utf-8")) == truths


def test_chimerax_mode_has_no_long_bonds(complexes):
    """The relaxed Mills & Dean limits: no N/O pair beyond 3.53 + 0.4 Å (the longest D...A limit,
    generic O acceptors), and most bonds are short."""
    distances = [b.distance for cx in complexes.values() for b in detect_hbonds(cx, "chimerax")]
    assert distances and max(distances) <= 3.93
    assert np.mean(np.array(distances) <= 3.5) > 0.85


def test_standard_residue_classes(complexes):
    """Residue templates give the classes a chemist expects (checked on real pockets)."""
    seen: dict[tuple[str, str], set] = {}
    for cx in complexes.values():
        g = chimerax_graph(cx)
        for k in cx.pocket_indices[:]:
            if cx.elements[k] not in ("N", "O", "S") or cx.residue_index[k] < 0:
                continue
            key = (str(cx.res_names[k]), str(cx.atom_names[k]))
            site = md.acceptor_site(g, int(k))
            seen.setdefault(key, set()).add(
                (md.donor_class(g, int(k)), site.name if site else None)
            )
    assert ("hydroxyl", "hydroxyl O") in seen[("SER", "OG")]
    assert ("phenol OH", "phenol O") in seen[("TYR", "OH")]
    assert (None, "carboxylate O") in seen[("ASP", "OD1")] and (None, "carboxylate O") in seen[
        ("GLU", "OE2")
    ]
    assert ("protonated primary amine", None) in seen[("LYS", "NZ")]
    assert ("protonated C=N NH2", None) in seen[("ARG", "NH1")]
    assert ("amide NH2", None) in seen[("ASN", "ND2")] and (None, "amide O") in seen[("GLN", "OE1")]
    assert ("5-ring NH", None) in seen[("TRP", "NE1")]
    assert ("amide NH", None) in seen[("ALA", "N")] and (None, "amide O") in seen[("ALA", "O")]
    # a proline N inside a segment has no H; a segment's first is N3+ (ChimeraX's terminal N)
    assert seen[("PRO", "N")] == {(None, None), ("secondary ammonium", None)}
    assert seen[("MET", "SD")] == {(None, None)}  # an S3 thioether: no ChimeraX acceptor class
    # histidine without input hydrogens: either ring N may donate (inferred H) and accept
    his = seen[("HIS", "NE2")] | seen[("HIS", "ND1")]
    assert ("5-ring NH", "asymmetric 5-ring N") in his


def test_ligand_hydrogens_come_from_the_mol2(complexes):
    """1QBS: the MOL2 draws 38 hydrogens (its atom names are the answers'); the chimerax mode
    uses them, the plip mode keeps the SDF's."""
    cx = complexes["1qbs"]
    assert len(cx.mol2_h_parent) == 38 and cx.is_ligand[cx.mol2_h_parent].all()
    h, parent = chimerax_hydrogens(cx)
    on_ligand = cx.is_ligand[parent]
    assert np.allclose(np.sort(h[on_ligand], axis=0), np.sort(cx.mol2_h_coords, axis=0))
    g = chimerax_graph(cx)
    for k in cx.ligand_indices:
        assert g.h_count[k] == int((cx.mol2_h_parent == k).sum())


def test_explicit_hydroxyl_hydrogen_decides_on_a_real_complex(complexes):
    """Turning a ligand hydroxyl's MOL2 hydrogen by 180 degrees about its C-O bond moves its
    bonds: the chimerax mode follows where the hydrogen points."""
    cx = complexes["1qbs"]
    h, parent = chimerax_hydrogens(cx)
    before = {b.pocket_text() for b in detect_hbonds(cx, "chimerax")}
    moved = False
    for d in rotatable_donors(cx, parent):
        if not cx.is_ligand[d]:
            continue
        nbr = [int(b) if int(a) == d else int(a) for a, b in cx.bonds if d in (int(a), int(b))][0]
        rows = np.flatnonzero(cx.mol2_h_parent == d)
        axis = cx.coords[d] - cx.coords[nbr]
        axis /= np.linalg.norm(axis)
        v = cx.mol2_h_coords[rows] - cx.coords[d]
        turned = cx.coords[d] + 2 * np.outer(v @ axis, axis) - v  # 180 degrees about the axis
        coords = cx.mol2_h_coords.copy()
        coords[rows] = turned
        after = {
            b.pocket_text()
            for b in detect_hbonds(dataclasses.replace(cx, mol2_h_coords=coords), "chimerax")
        }
        moved |= after != before
    assert moved


def test_rotamer_sensitive_bonds_are_reported(complexes):
    """A bond made by a modelled hydroxyl H vanishes when that H is turned away, and the audit's
    detector reports it as appearing at the best rotamer."""
    cx = complexes["1qbs"]
    vanish, appear = rotamer_sensitive(cx, "chimerax")
    bonds = {b.pocket_text() for b in detect_hbonds(cx, "chimerax")}
    assert vanish <= bonds and not appear & bonds
    assert vanish | appear
    assert rotamer_sensitive(complexes["1a28"], "chimerax") == (set(), set())  # no modelled rotor H


def test_residue_without_template_is_one_clear_error(tmp_path, sample_refs):
    """A standard residue atom that its template lacks: the chimerax mode names file, residue
    and atom; the plip mode still reads the complex."""
    src = next(r for r in sample_refs if r.pdb_id == "1a28").path
    dst = tmp_path / "1a28"
    shutil.copytree(src, dst)
    pocket = dst / "1a28_pocket.pdb"
    lines = pocket.read_text().splitlines()
    for k, line in enumerate(lines):
        if line.startswith("ATOM") and line[17:20] == "SER" and line[12:16].strip() == "OG":
            lines[k] = line[:12] + " OX " + line[16:]
            break
    pocket.write_text("\n".join(lines) + "\n")
    cx = read_pdbbind_dir(dst)
    assert detect_hbonds(cx, "plip") is not None
    with pytest.raises(InputError) as err:
        detect_hbonds(cx, "chimerax")
    text = str(err.value)
    assert str(dst) in text and "SER" in text and "OX" in text and "template" in text
    assert "\n" not in text


def test_unknown_mode_is_refused():
    from misi_bench.builder.dataset.config import BuildConfig

    with pytest.raises(MisiError, match="unknown H-bond mode 'vmd'"):
        BuildConfig(hbonds="vmd")
    with pytest.raises(ValueError, match="chimerax, plip"):
        detect_hbonds(None, "vmd")  # type: ignore[arg-type]


def test_mode_is_part_of_the_build_identity():
    from misi_bench.builder.core.constants import BUILDER_VERSION
    from misi_bench.builder.dataset.config import BuildConfig

    a, b = BuildConfig(), BuildConfig(hbonds="plip")
    assert a.hbonds == "chimerax"
    assert (
        a.generation_fields()["hbonds"] == "chimerax" and b.generation_fields()["hbonds"] == "plip"
    )
    assert a.config_hash != b.config_hash
    assert tuple(map(int, BUILDER_VERSION.split("."))) >= (0, 5, 0)  # the mode came with 0.5.0


def test_prompt_rule_follows_the_mode(complexes):
    """T4/T9 state the mode's rule; the plip sentence is the 1.3.0 text unchanged."""
    from misi_bench.builder.tasks.base import annotate
    from misi_bench.builder.tasks.data import task_profile

    def hbond_rule(mode):
        return task_profile("pocket_ligand", "explicit").hbond_rules[mode]

    assert "at most 4.1 Å apart" in hbond_rule("plip") and "100°" in hbond_rule("plip")
    assert "ChimeraX" in hbond_rule("chimerax") and "4.1" not in hbond_rule("chimerax")
    assert task_profile("pocket_ligand", "explicit").template_version == "1.5.0"
    from misi_bench.builder.tasks import generator
    from misi_bench.builder.tasks.base import TaskContext

    for mode in HBOND_MODES:
        ann = annotate(complexes["1hvr"], hbonds=mode)
        ctx = TaskContext.for_task(
            "pocket_ligand",
            ann,
            "test",
            0,
            "explicit",
            partners=[],
            load_partner=lambda p: None,
        )
        (inst,) = generator("pocket_ligand")(ctx)
        assert " ".join(hbond_rule(mode).split()) in " ".join(inst.question.split())
        assert inst.answer == "; ".join(
            b.pocket_text() for b in sorted(detect_hbonds(complexes["1hvr"], mode))
        )


def test_validator_rederives_in_the_builds_mode(complexes, sample_refs):
    from misi_bench.builder.checks import validate

    for mode in HBOND_MODES:
        manifest = {"source": "samples", "config": {"hbonds": mode, "image_size": 256}}
        setup = validate.StructureSource.of(manifest)
        assert setup.hbonds == mode
        bonds = setup.annotations().get("1hvr").hbonds
        assert [b.pocket_text() for b in bonds] == [
            b.pocket_text() for b in detect_hbonds(complexes["1hvr"], mode)
        ]
    assert validate.StructureSource.of({"source": "samples", "config": {}}).hbonds == "plip"


def test_card_describes_the_mode():
    from misi_bench.builder.dataset.card import HBOND_CARD_TEXT

    assert set(HBOND_CARD_TEXT) == set(HBOND_MODES)
    assert "Mills & Dean" in HBOND_CARD_TEXT["chimerax"] and "4.1 Å" in HBOND_CARD_TEXT["plip"]


def test_mol2_heavy_atoms_must_match_the_sdf(tmp_path, sample_refs):
    src = next(r for r in sample_refs if r.pdb_id == "1a28").path
    dst = tmp_path / "1a28"
    shutil.copytree(src, dst)
    mol2 = dst / "1a28_ligand.mol2"
    text = mol2.read_text().splitlines()
    start = text.index("@<TRIPOS>ATOM") + 1
    parts = text[start].split()
    parts[2] = f"{float(parts[2]) + 0.5:.4f}"
    text[start] = " ".join(parts)
    mol2.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match="do not match by coordinates") as err:
        load_complex(type(sample_refs[0])(pdb_id="1a28", path=dst))
    assert str(mol2) in str(err.value)


def test_a_build_skips_a_complex_without_template_with_the_reason(tmp_path, sample_refs):
    """In a build, the chimerax mode's bad-input error skips that complex (never the build): the
    unit records the one-line reason that the manifest's ``skipped_complexes`` lists."""
    from misi_bench.builder.core.records import ComplexRef
    from misi_bench.builder.dataset.config import BuildConfig
    from misi_bench.builder.dataset.units import generate_unit

    src = next(r for r in sample_refs if r.pdb_id == "1a28").path
    dst = tmp_path / "1a28"
    shutil.copytree(src, dst)
    pocket = dst / "1a28_pocket.pdb"
    text = pocket.read_text().replace(" OG  SER ", " OX  SER ", 1)
    pocket.write_text(text)
    refs = {"1a28": ComplexRef(pdb_id="1a28", path=dst)}
    rows, result = generate_unit(
        "1a28", refs, {"1a28": "test"}, BuildConfig(source=str(tmp_path), tasks=("pocket_ligand",))
    )
    assert rows == [] and not result.ok
    assert (
        "no atom-type template" in result.error
        and str(dst) in result.error
        and "\n" not in result.error
    )


def test_explain_pair_agrees_with_the_detector_and_names_the_failing_check(complexes):
    """``explain_pair`` (the reasons in docs/hbonds.md) names a class pair exactly when the
    detector finds it, and otherwise the one check that fails, with its measured value: 1A28's
    ARG 766 NH2 ... O3 (2.77 Å) fails on the D-H...A angle of both of its computed hydrogens."""
    from misi_bench.builder.chemistry.hbonds import _near_other_side

    checked = 0
    for cx in complexes.values():
        g = chimerax_graph(cx)
        polar = np.isin(cx.elements, ("N", "O", "S"))
        near = _near_other_side(cx, md.SEARCH_RADIUS)
        pocket = [int(k) for k in cx.pocket_indices if polar[k] and near[k]]
        ligand = [int(k) for k in cx.ligand_indices if polar[k] and near[k]]
        for donors, acceptors in ((pocket, ligand), (ligand, pocket)):
            found = set(md.find_pairs(g, donors, acceptors))
            for don in donors:
                for acc in acceptors:
                    if np.linalg.norm(g.coords[don] - g.coords[acc]) > md.SEARCH_RADIUS:
                        continue
                    reason = md.explain_pair(g, don, acc)
                    assert ("->" in reason) == ((don, acc) in found), reason
                    checked += 1
    assert checked > 500
    cx = complexes["1a28"]
    g = chimerax_graph(cx)

    def atom(res_number, name):
        hits = np.flatnonzero(
            (cx.res_numbers == res_number) & (cx.atom_names == name) & (cx.chain_ids == "A")
        )
        return int(hits[0])

    arg = atom(766, "NH2")
    o3 = int(next(k for k in cx.ligand_indices if cx.atom_names[k] == "O3"))
    reason = md.explain_pair(g, arg, o3)
    assert reason.startswith("protonated C=N NH2 donor test (upsilon_tau)"), reason
    assert "D-H...A" in reason and "under 120°" in reason, reason
    gln = md.explain_pair(g, atom(725, "NE2"), o3)
    assert gln.startswith("ketone/aldehyde O acceptor test (phi_psi): phi 83° under 90°"), gln
    far = md.explain_pair(g, atom(766, "NH1"), o3)
    assert "D...A 4.64 Å over 3.70 Å" in far, far

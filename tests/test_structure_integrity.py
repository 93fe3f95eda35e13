"""Structure reading never merges or drops atoms silently (issue 30 items 1, 2 and 5): real
complexes from tests/data edited the way each broken input looks, each read alone and in a build."""

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import numpy as np
import pytest
from misi_bench.builder.chemistry.hbonds import detect_hbonds
from misi_bench.builder.chemistry.segments import split_segments
from misi_bench.builder.chemistry.structure import load_complex, read_pdbbind_dir, read_raw_entry
from misi_bench.builder.core.errors import InputError
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.store.sources import discover, folder_id

RECORDS = ("ATOM", "HETATM")


def _copy(sample_refs, tmp_path, pdb_id, name=None):
    src = next(r for r in sample_refs if r.pdb_id == pdb_id).path
    dst = tmp_path / (name or pdb_id)
    shutil.copytree(src, dst)
    return dst


def _edit_pdb(path, fn):
    lines = path.read_text().splitlines()
    path.write_text("\n".join(x for x in (fn(ln) for ln in lines) if x is not None) + "\n")


def _chain(line, old, new):
    if line.startswith(RECORDS) and line[21] == old:
        return line[:21] + new + line[22:]
    return line


def _bond_keys(cx, chain_map=None):
    chain_map = chain_map or {}
    return sorted(
        (chain_map.get(b.chain, b.chain), b.res_number, b.protein_atom_name, b.ligand_atom_name)
        for b in detect_hbonds(cx)
    )


# ------------------------------------------------------------------------- repeated chain ids


@pytest.mark.parametrize(
    "case",
    ["second chain renamed A", "second chain blank", "both chains blank", "no TER between them"],
)
def test_homodimer_whose_chains_share_an_id_keeps_every_atom(sample_refs, tmp_path, case):
    """1HVR's pocket holds both HIV protease chains (A, B; 627 atoms, 10 H-bonds). With the
    second chain under the first's id (or both blank) nothing is merged: every atom and bond
    stays, the second run gets its own chain label, and the read report names it."""
    original = load_complex(next(r for r in sample_refs if r.pdb_id == "1hvr"))
    assert (~original.is_ligand).sum() == 627 and len(detect_hbonds(original)) == 10
    d = _copy(sample_refs, tmp_path, "1hvr")
    pocket = d / "1hvr_pocket.pdb"
    if case == "second chain renamed A":
        _edit_pdb(pocket, lambda ln: _chain(ln, "B", "A"))
        first, second = "A", "A2"
    elif case == "second chain blank":
        _edit_pdb(pocket, lambda ln: _chain(ln, "B", " "))
        first, second = "A", "_"
    elif case == "both chains blank":
        _edit_pdb(pocket, lambda ln: _chain(_chain(ln, "A", " "), "B", " "))
        first, second = "_", "_2"
    else:
        _edit_pdb(pocket, lambda ln: None if ln.startswith("TER") else _chain(ln, "B", "A"))
        first, second = "A", "A2"
    cx = read_pdbbind_dir(d)
    assert (~cx.is_ligand).sum() == 627 and cx.n_atoms == original.n_atoms
    assert len(cx.residues) == len(original.residues)
    assert {r.chain for r in cx.residues} == {first, second}
    np.testing.assert_array_equal(cx.coords, original.coords)
    assert _bond_keys(cx) == _bond_keys(original, {"A": first, "B": second})
    assert len({b.pocket_text() for b in detect_hbonds(cx)}) == 10
    if second != "_":
        assert cx.read_report.segments == (f"{first} -> {second}: 43 residues",)
    else:
        assert cx.read_report.segments == ()


def test_mmcif_chains_sharing_an_author_id_are_kept_apart(raw_refs, tmp_path):
    """1FKI (mmCIF, two FKBP12 copies A and B) with chain B's author id set to A: the second
    copy's subchains get the label A2 and the first copy's pocket is read as before."""
    text = gzip.decompress(raw_refs["1fki"].path.read_bytes()).decode()
    lines = text.splitlines()
    columns = [ln.strip() for ln in lines if ln.startswith("_atom_site.")]
    auth = columns.index("_atom_site.auth_asym_id")
    out = []
    for ln in lines:
        if ln.startswith(("ATOM", "HETATM")):
            fields = ln.split()
            fields[auth] = "A" if fields[auth] == "B" else fields[auth]
            ln = " ".join(fields)
        out.append(ln)
    path = tmp_path / "1fki_one_author_chain.cif"
    path.write_text("\n".join(out) + "\n")
    full = read_raw_entry(raw_refs["1fki"].path, "SB1")
    cx = read_raw_entry(path, "SB1")
    assert cx.read_report.segments == ("A -> A2: 107 residues",)
    np.testing.assert_array_equal(cx.coords, full.coords)
    assert _bond_keys(cx) == _bond_keys(full) and len(_bond_keys(full)) >= 2
    # chain B's ligand copy (another residue number, so still under A) has the second protein
    # copy around it, now labelled A2
    b_full = read_raw_entry(raw_refs["1fki"].path, "SB1", chain="B")
    copies = [read_raw_entry(path, "SB1", chain="A", resnum=n) for n in (108, 109)]
    b_copy = next(
        c for c in copies if np.array_equal(c.coords[c.is_ligand], b_full.coords[b_full.is_ligand])
    )
    assert [(r.chain, r.number) for r in b_copy.residues] == [
        ({"B": "A2"}.get(r.chain, r.chain), r.number) for r in b_full.residues
    ]
    assert "A2" in {r.chain for r in b_copy.residues}


def test_segments_leave_well_formed_text_alone(sample_refs):
    for ref in sample_refs:
        text = next(ref.path.glob("*_pocket.pdb")).read_text()
        seg = split_segments(text)
        assert seg.text is text and not seg.labels and not seg.notes, ref.pdb_id


def test_ligand_records_of_a_chain_after_another_chain_stay_in_it(raw_refs):
    """In a whole PDB entry a chain's HETATM records come after every chain's ATOM records; with
    no residue repeated that is not a second segment (1A28: STR A 1 is found in chain A)."""
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    assert not split_segments(text).notes
    cx = read_raw_entry(raw_refs["1a28"].path, "STR", chain="A")
    assert cx.read_report.water_atoms > 0 and not cx.read_report.segments


def test_alternate_location_listed_apart_is_not_a_segment(raw_refs, tmp_path):
    """GLN 725's second conformer written after GLN 726 stays an alternate location of GLN 725."""
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    out, later = [], []
    for line in text.splitlines():
        if line.startswith("ATOM") and line[21] == "A" and line[22:26].strip() == "725":
            out.append(line[:16] + "A" + line[17:54] + "  0.60" + line[60:])
            x = f"{float(line[30:38]) + 1.5:8.3f}"
            later.append(line[:16] + "B" + line[17:30] + x + line[38:54] + "  0.40" + line[60:])
            continue
        if later and not (line.startswith("ATOM") and line[22:26].strip() == "726"):
            out += later
            later = []
        out.append(line)
    path = tmp_path / "1a28_altloc_apart.pdb"
    path.write_text("\n".join(out) + "\n")
    cx = read_raw_entry(path, "STR")
    full = read_raw_entry(raw_refs["1a28"].path, "STR")
    assert not cx.read_report.segments and cx.read_report.altloc_atoms > 5
    np.testing.assert_array_equal(cx.coords, full.coords)


# ----------------------------------------------------------------------- repeated atom names


def test_duplicated_record_is_dropped_and_counted(sample_refs, tmp_path):
    original = load_complex(next(r for r in sample_refs if r.pdb_id == "1a28"))
    d = _copy(sample_refs, tmp_path, "1a28")
    pocket = d / "1a28_pocket.pdb"
    lines = pocket.read_text().splitlines()
    atoms = [k for k, ln in enumerate(lines) if ln.startswith("ATOM")]
    doubled = []
    for k, ln in enumerate(lines):
        doubled.append(ln)
        if k in atoms[:30]:
            doubled.append(ln)
    pocket.write_text("\n".join(doubled) + "\n")
    cx = read_pdbbind_dir(d)
    assert cx.read_report.duplicate_atoms == 30
    assert cx.read_report.atoms_read == original.read_report.atoms_read + 30
    np.testing.assert_array_equal(cx.coords, original.coords)
    assert list(cx.atom_names) == list(original.atom_names)


def test_two_pocket_atoms_under_one_name_refuse_the_complex(sample_refs, tmp_path):
    """1A28's pocket (662 atoms) with every CB renamed CA: two atoms named CA in one residue
    would make answers ambiguous; the complex is refused, naming residue and atom."""
    d = _copy(sample_refs, tmp_path, "1a28")
    _edit_pdb(
        d / "1a28_pocket.pdb",
        lambda ln: (
            ln[:12] + " CA " + ln[16:] if ln.startswith("ATOM") and ln[12:16] == " CB " else ln
        ),
    )
    with pytest.raises(InputError, match=r"residue \w{3} \d+ chain A has two atoms named CA"):
        read_pdbbind_dir(d)


def test_repeated_name_outside_the_pocket_is_counted_not_fatal(raw_refs, tmp_path):
    full = read_raw_entry(raw_refs["1a28"].path, "STR")
    pocket_numbers = {(r.chain, r.number) for r in full.residues}
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    far = next(
        ln
        for ln in text.splitlines()
        if ln.startswith("ATOM")
        and (ln[21], int(ln[22:26])) not in pocket_numbers
        and ln[12:16] == " CB "
    )
    lines = [ln[:12] + " CA " + ln[16:] if ln == far else ln for ln in text.splitlines()]
    path = tmp_path / "1a28_dup.pdb"
    path.write_text("\n".join(lines) + "\n")
    cx = read_raw_entry(path, "STR")
    assert cx.read_report.lost_atoms == 1 and cx.read_report.duplicate_atoms == 0
    np.testing.assert_array_equal(cx.coords, full.coords)


def test_hydrogens_under_one_name_are_all_kept(sample_refs, tmp_path):
    """Hydrogens are matched to heavy atoms by position: a file naming them all 'H' loses none."""
    original = load_complex(next(r for r in sample_refs if r.pdb_id == "1hvr"))
    d = _copy(sample_refs, tmp_path, "1hvr")
    _edit_pdb(
        d / "1hvr_pocket.pdb",
        lambda ln: ln[:12] + " H  " + ln[16:] if ln.startswith("ATOM") and ln[77] == "H" else ln,
    )
    cx = read_pdbbind_dir(d)
    assert len(original.h_coords) > 20
    np.testing.assert_array_equal(cx.h_coords, original.h_coords)
    assert _bond_keys(cx) == _bond_keys(original)


def test_alternate_locations_are_counted(raw_refs, tmp_path):
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    out, n = [], 0
    for line in text.splitlines():
        if line.startswith("ATOM") and line[22:26].strip() == "725":
            first = line[:16] + "A" + line[17:54] + "  0.60" + line[60:]
            x = f"{float(line[30:38]) + 1.5:8.3f}"
            out += [first, line[:16] + "B" + line[17:30] + x + line[38:54] + "  0.40" + line[60:]]
            n += 1
        else:
            out.append(line)
    path = tmp_path / "1a28_altloc.pdb"
    path.write_text("\n".join(out) + "\n")
    cx = read_raw_entry(path, "STR")
    assert n > 5 and cx.read_report.altloc_atoms == n
    assert cx.read_report.as_dict()["altloc_atoms"] == n


# ------------------------------------------------------------------------------ ligand files


def test_mol2_hydrogen_without_a_bond_is_counted(sample_refs, tmp_path):
    original = load_complex(next(r for r in sample_refs if r.pdb_id == "4cup"))
    d = _copy(sample_refs, tmp_path, "4cup")
    mol2 = d / "4cup_ligand.mol2"
    lines = mol2.read_text().splitlines()
    atoms = lines.index("@<TRIPOS>ATOM") + 1
    hydrogens = {
        str(k - atoms + 1)
        for k in range(atoms, lines.index("@<TRIPOS>BOND"))
        if lines[k].split()[5] == "H"
    }
    start = lines.index("@<TRIPOS>BOND") + 1
    k = next(k for k in range(start, len(lines)) if set(lines[k].split()[1:3]) & hydrogens)
    del lines[k]
    mol2.write_text("\n".join(lines) + "\n")
    cx = read_pdbbind_dir(d)
    assert original.read_report.unbonded_hydrogens == 0
    assert cx.read_report.unbonded_hydrogens == 1
    assert len(cx.mol2_h_coords) == len(original.mol2_h_coords) - 1


def test_truncated_sdf_is_an_error_not_a_silent_mol2(sample_refs, tmp_path):
    """1HVR's SDF cut in half beside a good MOL2: reading the MOL2 instead would give 2 H-bonds
    instead of 10, so the complex is refused, naming the SDF."""
    d = _copy(sample_refs, tmp_path, "1hvr")
    sdf = d / "1hvr_ligand.sdf"
    lines = sdf.read_text().splitlines(keepends=True)
    sdf.write_text("".join(lines[: len(lines) // 2]))
    with pytest.raises(InputError, match=r"1hvr_ligand\.sdf.*not used in its place") as err:
        read_pdbbind_dir(d)
    assert "1hvr_ligand.mol2" in str(err.value)
    sdf.unlink()  # no SDF at all: the MOL2 is the chemistry, and the report says so
    cx = read_pdbbind_dir(d)
    assert cx.read_report.ligand_source == "1hvr_ligand.mol2"


def test_sdf_and_mol2_with_different_atom_counts_are_refused(sample_refs, tmp_path):
    d = _copy(sample_refs, tmp_path, "1a28")
    mol2 = d / "1a28_ligand.mol2"
    lines = mol2.read_text().splitlines()
    start = lines.index("@<TRIPOS>ATOM") + 1
    heavy = next(k for k in range(start, len(lines)) if lines[k].split()[5] != "H")
    del lines[heavy]
    mol2.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="do not describe one molecule"):
        read_pdbbind_dir(d)


# ------------------------------------------------------------------------------ coordinates


def test_nan_in_the_protein_is_refused_naming_the_atom(sample_refs, tmp_path):
    d = _copy(sample_refs, tmp_path, "1a28")
    lines = (d / "1a28_pocket.pdb").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("ATOM"))
    lines[k] = lines[k][:30] + f"{'nan':>8}" + lines[k][38:]
    (d / "1a28_pocket.pdb").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"atom N of \w{3} \d+ chain A .*not a number"):
        read_pdbbind_dir(d)


def test_nan_in_the_ligand_is_refused(sample_refs, tmp_path):
    d = _copy(sample_refs, tmp_path, "4cup")
    (d / "4cup_ligand.sdf").unlink()
    mol2 = d / "4cup_ligand.mol2"
    lines = mol2.read_text().splitlines()
    k = lines.index("@<TRIPOS>ATOM") + 1
    lines[k] = lines[k].replace(lines[k].split()[2], "nan", 1)
    mol2.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"4cup_ligand\.mol2: ligand atom \w+ .*not a number"):
        read_pdbbind_dir(d)


def _move_ligand_atom(d, pdb_id, x):
    """Move the SDF's first heavy atom (and the MOL2 atom at the same place) to x Å."""
    sdf = d / f"{pdb_id}_ligand.sdf"
    lines = sdf.read_text().splitlines()
    old = tuple(float(v) for v in lines[4].split()[:3])
    lines[4] = f"{x:10.4f}" + lines[4][10:]
    sdf.write_text("\n".join(lines) + "\n")
    mol2 = d / f"{pdb_id}_ligand.mol2"
    out = []
    for ln in mol2.read_text().splitlines():
        parts = ln.split()
        if (
            len(parts) >= 6
            and all(abs(float(p) - o) < 1e-3 for p, o in zip(parts[2:5], old) if _is_number(p))
            and all(_is_number(p) for p in parts[2:5])
        ):
            ln = ln.replace(parts[2], f"{x:.4f}", 1)
        out.append(ln)
    mol2.write_text("\n".join(out) + "\n")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_one_ligand_atom_far_away_is_refused(sample_refs, tmp_path):
    d = _copy(sample_refs, tmp_path, "1a28")
    _move_ligand_atom(d, "1a28", 99999.0)  # the widest x an SDF V2000 atom line holds
    with pytest.raises(InputError, match=r"ligand bond .* long .*broken coordinates"):
        read_pdbbind_dir(d)
    (d / "1a28_ligand.sdf").unlink()  # MOL2 only, free format: 10^6 Å
    mol2 = d / "1a28_ligand.mol2"
    mol2.write_text(mol2.read_text().replace("99999.0000", "1000000.0000"))
    with pytest.raises(InputError, match="broken coordinates"):
        read_pdbbind_dir(d)


def test_one_pocket_atom_far_away_is_refused(sample_refs, tmp_path):
    d = _copy(sample_refs, tmp_path, "1a28")
    lines = (d / "1a28_pocket.pdb").read_text().splitlines()
    k = [i for i, ln in enumerate(lines) if ln.startswith("ATOM")][40]
    lines[k] = lines[k][:30] + f"{9999.0:8.3f}" + lines[k][38:]
    (d / "1a28_pocket.pdb").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"pocket atom \w+ of \w{3} \d+ chain A is .*broken"):
        read_pdbbind_dir(d)


# ---------------------------------------------------------------------------- folder names


def _bad_name_root(sample_refs, tmp_path):
    root = tmp_path / "pdbbind"
    root.mkdir()
    bad = os.fsdecode(b"1a28\xff")
    _copy(sample_refs, root, "1a28", name=bad)
    _copy(sample_refs, root, "4cup", name="4CUP")
    _copy(sample_refs, root, "4cup")
    _copy(sample_refs, root, "2zmm")
    return root


def test_folder_names_not_utf8_or_colliding_by_case_are_recorded(sample_refs, tmp_path):
    refs = {r.pdb_id: r for r in discover(_bad_name_root(sample_refs, tmp_path))}
    assert set(refs) == {"1a28\\xff", "2zmm", "4cup"}
    assert "not UTF-8" in refs["1a28\\xff"].problem
    assert "4CUP, 4cup differ only by case" in refs["4cup"].problem
    assert not refs["2zmm"].problem
    for pdb_id in ("1a28\\xff", "4cup"):
        with pytest.raises(InputError, match="rename"):
            load_complex(refs[pdb_id])
        refs[pdb_id].problem.encode("utf-8")  # writable anywhere


def test_build_with_broken_complexes_ships_the_others(sample_refs, tmp_path):
    """One build over a root holding a homodimer with one chain id, a NaN, a truncated SDF, a
    folder name that is not UTF-8 and a case collision: it finishes, validates, ships 1HVR with
    all its atoms and 10 H-bonds, and records every skip with its reason."""
    root = _bad_name_root(sample_refs, tmp_path)
    _edit_pdb(_copy(sample_refs, root, "1hvr") / "1hvr_pocket.pdb", lambda ln: _chain(ln, "B", "A"))
    nan = _copy(sample_refs, root, "1fki")
    lines = (nan / "1fki_pocket.pdb").read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("ATOM"))
    lines[k] = lines[k][:38] + f"{'nan':>8}" + lines[k][46:]
    (nan / "1fki_pocket.pdb").write_text("\n".join(lines) + "\n")
    cut = _copy(sample_refs, root, "1afs") / "1afs_ligand.sdf"
    cut.write_text(cut.read_text()[: len(cut.read_text()) // 2])
    manifest = build_dataset(
        source=root, out=tmp_path / "out", tasks=["pocket_ligand"], progress=False
    )
    skipped = manifest["skipped_complexes"]
    assert set(skipped) == {"1a28\\xff", "4cup", "1fki", "1afs"}
    assert "not UTF-8" in skipped["1a28\\xff"] and "differ only by case" in skipped["4cup"]
    assert "not a number" in skipped["1fki"] and "1afs_ligand.sdf" in skipped["1afs"]
    assert manifest["validation"]["ok"] and manifest["audit"]["ok"]
    assert set(manifest["inputs"]) - set(skipped) == {"1hvr", "2zmm"}
    assert manifest["complexes"]["train"] + manifest["complexes"]["test"] == 2
    assert (
        json.loads((tmp_path / "out" / "manifest.json").read_text())["skipped_complexes"] == skipped
    )
    assert manifest["reading"]["1hvr"]["segments"] == ["A -> A2: 43 residues"]
    assert manifest["reading"]["1hvr"]["atoms_read"] == 753
    rows = [
        r
        for split in ("train", "test")
        if manifest["counts"]["pocket_ligand"][split]
        for r in datasets.load_dataset(str(tmp_path / "out"), "pocket_ligand", split=split)
    ]
    answer = next(r["answer"] for r in rows if r["pdb_id"] == "1hvr")
    bonds = answer.split("; ")
    assert len(bonds) == 10 and len(set(bonds)) == 10
    assert {b.split(", ")[0].split()[3] for b in bonds} == {"A", "A2"}


def test_shown_name_of_a_path_escapes_bytes():
    assert folder_id(os.fsdecode(b"4CU\xfe")) == "4cu\\xfe"
    assert folder_id("4CUP") == "4cup"
    assert Path(os.fsdecode(b"x\xff")).name != folder_id(os.fsdecode(b"x\xff"))


def test_inspect_reports_the_relabelled_chain(sample_refs, tmp_path):
    """``misi-bench inspect --json`` of 1HVR with both chains called A: 10 bonds, five per copy,
    and the read report naming the second run."""
    d = _copy(sample_refs, tmp_path, "1hvr")
    _edit_pdb(d / "1hvr_pocket.pdb", lambda ln: _chain(ln, "B", "A"))
    code = "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run(
        [sys.executable, "-c", code, "inspect", str(d), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["n_pocket_atoms"] == 627 and len(info["hbonds"]) == 10
    assert sum(b.split(", ")[0].endswith(" A2") for b in info["hbonds"]) == 5
    assert info["reading"]["segments"] == ["A -> A2: 43 residues"]
    assert "kept as separate chains" in out.stderr

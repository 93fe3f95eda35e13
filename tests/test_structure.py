"""Structure reading on real complexes, and every kind of bad input."""

import gzip
import shutil

import numpy as np
import pytest
from misi_bench.builder.chemistry import files, structure
from misi_bench.builder.chemistry.structure import load_complex, read_pdbbind_dir, read_raw_entry
from misi_bench.builder.core.errors import InputError
from misi_bench.builder.core.records import ComplexRef


def test_every_sample_loads_with_a_pocket_around_the_ligand(complexes):
    assert len(complexes) >= 15
    for pdb_id, cx in complexes.items():
        lig = cx.coords[cx.is_ligand]
        assert 5 <= len(lig) <= 200, pdb_id
        assert len(cx.residues) >= 5, pdb_id
        # every pocket residue has an atom within 10 Å of the ligand, and residues are whole
        for r in range(len(cx.residues)):
            atoms = cx.residue_atoms(r)
            d = np.linalg.norm(cx.coords[atoms][:, None] - lig[None], axis=2).min()
            assert d <= 10.0 + 1e-6, (pdb_id, cx.residues[r])
        assert set(cx.elements[~cx.is_ligand]) <= {"C", "N", "O", "S", "Se"}
        assert "H" not in set(cx.elements)
        names = cx.atom_names[cx.is_ligand]
        assert len(set(names)) == len(names), f"{pdb_id}: ligand atom names must be unique"
        # ligand bonds exist and connect ligand atoms only
        lb = cx.bonds[cx.is_ligand[cx.bonds[:, 0]]]
        assert len(lb) >= len(lig) - 1 and cx.is_ligand[lb].all()


def test_mol2_names_are_pdb_names(complexes):
    cx = complexes["1a28"]
    names = set(cx.atom_names[cx.is_ligand].tolist())
    assert {"O3", "O20", "C21"} <= names


def test_pocket_cutoff_is_configurable(sample_refs):
    ref = next(r for r in sample_refs if r.pdb_id == "1a28")
    small = load_complex(ref, pocket_cutoff=4.0)
    full = load_complex(ref)
    assert 0 < len(small.residues) < len(full.residues)
    with pytest.raises(InputError, match="cutoff"):
        load_complex(ref, pocket_cutoff=-1)


def test_raw_entries_pdb_legacy_and_mmcif(raw_refs):
    assert raw_refs, "raw test entries are embedded"
    for ref in raw_refs.values():
        cx = load_complex(ref)
        assert cx.is_ligand.sum() >= 10
        assert len(cx.residues) >= 10
    cx = load_complex(raw_refs["1a28"])
    assert cx.ligand_code == "STR"
    # two copies: the first one is used unless a chain is named
    chains = {r.chain for r in cx.residues}
    assert "A" in chains


def test_raw_entry_named_copy(raw_refs):
    ref = raw_refs["1a28"]
    b = read_raw_entry(ref.path, "STR", chain="B")
    a = read_raw_entry(ref.path, "STR", chain="A")
    assert not np.allclose(a.coords[a.is_ligand].mean(0), b.coords[b.is_ligand].mean(0))
    with pytest.raises(InputError, match="no ligand STR in chain 'Q'"):
        read_raw_entry(ref.path, "STR", chain="Q")


# ----------------------------------------------------------------------------- bad input


def _sample_dir(sample_refs, pdb_id="1a28"):
    return next(r for r in sample_refs if r.pdb_id == pdb_id).path


def _copy(src, tmp_path):
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_missing_folder_and_files(tmp_path, sample_refs):
    with pytest.raises(InputError, match="not a directory"):
        read_pdbbind_dir(tmp_path / "nope")
    d = _copy(_sample_dir(sample_refs), tmp_path)
    for f in d.glob("*_pocket.pdb"):
        f.unlink()
    with pytest.raises(InputError, match="pocket.pdb"):
        read_pdbbind_dir(d)


def test_no_ligand_files(tmp_path, sample_refs):
    d = _copy(_sample_dir(sample_refs), tmp_path)
    for f in list(d.glob("*_ligand.*")):
        f.unlink()
    with pytest.raises(InputError, match="no ligand"):
        read_pdbbind_dir(d)


def test_empty_and_unparsable_files(tmp_path, sample_refs):
    d = _copy(_sample_dir(sample_refs), tmp_path)
    pocket = next(d.glob("*_pocket.pdb"))
    pocket.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_pdbbind_dir(d)
    pocket.write_text("this is not a structure file\n" * 5)
    with pytest.raises(InputError) as err:
        read_pdbbind_dir(d)
    assert str(pocket.name) in str(err.value)
    bad_cif = tmp_path / "broken.cif"
    bad_cif.write_text("data_x\nloop_\n_atom_site.id\n_atom_site.Cartn_x\n1\n")
    with pytest.raises(InputError, match="broken.cif"):
        read_raw_entry(bad_cif, "STR")
    gz = tmp_path / "broken.pdb.gz"
    gz.write_bytes(b"\x1f\x8b" + b"garbage" * 10)
    with pytest.raises(InputError, match="gzip"):
        read_raw_entry(gz, "STR")


def test_broken_ligand_files(tmp_path, sample_refs):
    d = _copy(_sample_dir(sample_refs), tmp_path)
    for f in d.glob("*_ligand.*"):
        f.write_text("garbage\n")
    with pytest.raises(InputError, match="ligand"):
        read_pdbbind_dir(d)


def test_ligand_far_from_protein(tmp_path, sample_refs):
    d = _copy(_sample_dir(sample_refs), tmp_path)
    pocket = next(d.glob("*_pocket.pdb"))
    lines = []
    for line in pocket.read_text().splitlines():
        if line.startswith(("ATOM", "HETATM")):
            x = float(line[30:38]) + 500.0
            line = f"{line[:30]}{x:8.3f}{line[38:]}"
        lines.append(line)
    pocket.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="far from any protein"):
        read_pdbbind_dir(d)


def test_only_hydrogens_and_nonstandard_residues(tmp_path):
    only_h = tmp_path / "onlyh.pdb"
    only_h.write_text(
        "HETATM    1  H1  LIG A   1       0.000   0.000   0.000  1.00  0.00           H\n"
        "HETATM    2  H2  LIG A   1       0.700   0.000   0.000  1.00  0.00           H\n"
        "HETATM    3  CA  MSE A   2       5.000   0.000   0.000  1.00  0.00           C\n"
        "END\n"
    )
    with pytest.raises(InputError, match="only hydrogen"):
        read_raw_entry(only_h, "LIG")


def test_alternate_locations_and_insertion_codes(raw_refs, tmp_path):
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    out = []
    for line in text.splitlines():
        if line.startswith("ATOM") and line[22:26].strip() == "725":
            # give GLN 725 an insertion code and a second, lower-occupancy alternate location
            line = line[:26] + "A" + line[27:]
            first = line[:16] + "A" + line[17:54] + "  0.60" + line[60:]
            second = (
                line[:16]
                + "B"
                + line[17:30]
                + f"{float(line[30:38]) + 1.5:8.3f}"
                + line[38:54]
                + "  0.40"
                + line[60:]
            )
            out += [first, second]
        else:
            out.append(line)
    path = tmp_path / "1a28_altloc.pdb"
    path.write_text("\n".join(out) + "\n")
    cx = read_raw_entry(path, "STR")
    labels = [r.label for r in cx.residues]
    assert "GLN 725A" in labels
    gln = [i for i in range(cx.n_atoms) if cx.res_names[i] == "GLN" and cx.ins_codes[i] == "A"]
    assert len(gln) == len(set(cx.atom_names[gln].tolist())), "one conformer kept"


def test_huge_structures_are_refused_with_a_reason(sample_refs, monkeypatch):
    ref = next(r for r in sample_refs if r.pdb_id == "1a28")
    monkeypatch.setattr(structure, "MAX_POCKET_ATOMS", 50)
    with pytest.raises(InputError, match="pocket has"):
        load_complex(ref)
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1000)
    with pytest.raises(InputError, match="limit"):
        load_complex(ref)


def test_non_ascii_names(tmp_path, sample_refs):
    d = tmp_path / "1a28_ünïcødé"
    shutil.copytree(_sample_dir(sample_refs), d)
    for f in d.iterdir():
        f.rename(d / f.name.replace("1a28", "1a28_ünïcødé"))
    cx = read_pdbbind_dir(d)
    assert cx.pdb_id == "1a28_ünïcødé"
    (d / "1a28_ünïcødé_pocket.pdb").write_bytes(b"\xff\xfe garbage \xe9\n")
    with pytest.raises(InputError) as err:
        read_pdbbind_dir(d)
    assert "ünïcødé" in str(err.value)


def test_raw_entry_requires_ligand_code(raw_refs):
    ref = raw_refs["1a28"]
    with pytest.raises(InputError, match="ligand"):
        load_complex(ComplexRef(pdb_id="1a28", path=ref.path, kind="raw"))


def test_nonstandard_residues_stay_out_of_the_pocket(raw_refs, tmp_path):
    """A residue that is no amino acid (here LEU 715's atoms under the name NAP, a cofactor's
    code) is left out of the pocket instead of failing the read; the rest is unchanged. Modified
    amino acids stay in (tests/test_modified_residues.py)."""
    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    lines = [
        ("HETATM" + ln[6:17] + "NAP" + ln[20:])
        if ln.startswith("ATOM") and ln[17:20] == "LEU" and ln[22:26].strip() == "715"
        else ln
        for ln in text.splitlines()
    ]
    path = tmp_path / "1a28_nap.pdb"
    path.write_text("\n".join(lines) + "\n")
    cx = read_raw_entry(path, "STR")
    full = read_raw_entry(raw_refs["1a28"].path, "STR")
    labels = {r.label for r in cx.residues}
    assert "LEU 715" in {r.label for r in full.residues} and "LEU 715" not in labels
    assert "NAP 715" not in labels and len(cx.residues) == len(full.residues) - 1


def test_released_chemical_dictionary_gives_the_same_templates_again():
    """``ccd.release_dictionary`` drops biotite's decoded dictionary (its memory) but no
    chemistry: a template made after the release equals the one made before it."""
    from misi_bench.builder.chemistry import ccd

    before = ccd.ccd_template("ATP")
    assert before is not None and len(before["names"]) == 31
    ccd._CCD_CACHE.pop("ATP")
    ccd.release_dictionary()
    from biotite.structure.info import ccd as biotite_ccd

    assert biotite_ccd.get_ccd.cache_info().currsize == 0
    after = ccd.ccd_template("ATP")
    assert after["names"] == before["names"] and after["bonds"] == before["bonds"]
    assert after["n_h"] == before["n_h"] and (after["coords"] == before["coords"]).all()

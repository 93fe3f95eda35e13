"""The checks' second reading (issue 50 item 3): biotite reads each structure file again and the
generator's record (gemmi, RDKit, our MOL2 reader) is compared with it atom by atom before any
answer is derived again; a reading fault cannot validate itself.

Real files throughout: the 19 embedded PDBbind samples and the three raw PDB/mmCIF entries
agree atom for atom; a record with one atom moved, renamed, re-elemented or put in another
chain (what a reading bug would give) is caught, naming the complex and the atom; and the
validator of a real build fails on the rows of such a complex.
"""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
from misi_bench.builder.checks import check_structures, second_reading
from misi_bench.builder.checks.validate import validate_dataset
from misi_bench.builder.core.errors import MisiError


def test_every_sample_and_raw_entry_reads_the_same_with_both_parsers(
    sample_refs, complexes, raw_refs
):
    from misi_bench.builder.chemistry.structure import load_complex

    for ref in sample_refs:
        found = second_reading.second_reading_problems(ref, complexes[ref.pdb_id])
        assert found.problems == () and found.checked == len(complexes[ref.pdb_id].coords)
        assert "ligand atom names (from the MOL2)" in found.unchecked
    for ref in raw_refs.values():  # PDB, gzipped PDB with serials in the element columns, mmCIF
        found = second_reading.second_reading_problems(ref, load_complex(ref))
        assert found.problems == () and found.unchecked == ()


def _tampered(cx, **columns):
    return dataclasses.replace(cx, **columns)


def _pocket_atom(cx) -> int:
    return int(np.flatnonzero(cx.residue_index >= 0)[0])


def test_a_moved_atom_is_named_with_its_complex(sample_refs, complexes):
    ref = sample_refs[0]
    cx = complexes[ref.pdb_id]
    i = _pocket_atom(cx)
    coords = cx.coords.copy()
    coords[i, 0] += 0.01  # ten times the files' precision
    found = second_reading.second_reading_problems(ref, _tampered(cx, coords=coords))
    res = cx.residues[int(cx.residue_index[i])]
    assert found.problems == (
        f"{cx.pdb_id}: atom {cx.atom_names[i]} of {res.label} chain {res.chain} at "
        f"({coords[i, 0]:.3f}, {coords[i, 1]:.3f}, {coords[i, 2]:.3f}) has no atom of the file "
        f"within {second_reading.TOLERANCE} Å",
    )


def test_swapped_names_a_wrong_element_and_a_wrong_chain_are_named(sample_refs, complexes):
    ref = sample_refs[0]
    cx = complexes[ref.pdb_id]
    i = _pocket_atom(cx)
    names = cx.atom_names.copy()
    names[[i, i + 1]] = names[[i + 1, i]]
    found = second_reading.second_reading_problems(ref, _tampered(cx, atom_names=names))
    assert len(found.problems) == 2
    assert f"atom name {names[i]} vs {cx.atom_names[i]}" in found.problems[0]
    elements = cx.elements.copy()
    ligand = int(np.flatnonzero(cx.is_ligand)[0])
    elements[ligand] = "S" if elements[ligand] != "S" else "O"
    found = second_reading.second_reading_problems(ref, _tampered(cx, elements=elements))
    assert found.problems == (
        f"{cx.pdb_id}: ligand atom {cx.atom_names[ligand]} (#{ligand}): element "
        f"{elements[ligand]} vs {cx.elements[ligand].upper()} (second reading)",
    )
    residues = list(cx.residues)
    k = int(cx.residue_index[i])
    residues[k] = dataclasses.replace(residues[k], chain="Q")
    found = second_reading.second_reading_problems(ref, _tampered(cx, residues=tuple(residues)))
    assert found.problems and all(f"chain Q vs {cx.residues[k].chain}" in p for p in found.problems)


def test_a_segment_of_a_repeated_chain_is_its_files_chain():
    assert second_reading._same_chain("A", "A") and second_reading._same_chain("A2", "A")
    assert not second_reading._same_chain("B", "A") and not second_reading._same_chain("AB", "A")


@pytest.mark.filterwarnings("ignore:Final record delimiter missing")
def test_a_file_biotite_cannot_read_is_a_finding(sample_refs, complexes, tmp_path):
    ref = sample_refs[0]
    folder = tmp_path / ref.pdb_id
    shutil.copytree(ref.path, folder)
    (folder / f"{ref.pdb_id}_ligand.sdf").write_text("not an SDF\n", encoding="utf-8")
    found = second_reading.second_reading_problems(
        dataclasses.replace(ref, path=folder), complexes[ref.pdb_id]
    )
    assert len(found.problems) == 1
    assert found.problems[0].startswith(f"{ref.pdb_id}: the second reading (biotite) could not")


@pytest.fixture()
def misread(monkeypatch):
    """The checks' first reading with a reading bug: one pocket atom's name swapped with the
    next one's (what a reader that shifts a column would give)."""
    real = check_structures.structure.load_complex

    def load(ref, pocket_cutoff):
        cx = real(ref, pocket_cutoff=pocket_cutoff)
        names = cx.atom_names.copy()
        i = _pocket_atom(cx)
        names[[i, i + 1]] = names[[i + 1, i]]
        return dataclasses.replace(cx, atom_names=names)

    monkeypatch.setattr(check_structures.structure, "load_complex", load)


def test_the_checks_refuse_a_complex_the_two_readings_disagree_on(sample_refs, misread):
    store = check_structures.CheckStructures(
        {r.pdb_id: r for r in sample_refs[:1]}, 6.5, 256, "plip"
    )
    with pytest.raises(MisiError, match=r"second reading \(biotite\) disagrees.*atom name"):
        store.get(sample_refs[0].pdb_id)


def test_validation_fails_on_the_rows_of_a_misread_complex(data_dir, misread):
    report = validate_dataset(data_dir)
    assert not report.ok
    assert any("second reading (biotite) disagrees" in p for p in report.problems)
    assert all(check == "answers" for _, check in report.failed)

"""The ligand code read from the MOL2 keeps its digits (issue 38: 1HVR's ligand read XK, not XK2;
1HPV's 478 read as nothing, 1FKI's SB1 as SB, 1S2G's 3D1 as 3D): the SUBSTRUCTURE record's
residue type, else the substructure name less a residue-number suffix equal to the substructure
id (Open Babel's ``263 XK2263``)."""

from __future__ import annotations

import csv
import re
import shutil

import pytest
from misi_bench.builder.chemistry.ligand import residue_code
from misi_bench.builder.chemistry.structure import read_pdbbind_dir

from scripts.fixtures import fixture_root

SETS = ("samples", "heldout", "copies")


def _index(set_name: str) -> list[dict]:
    with open(fixture_root(set_name) / "index.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("set_name", SETS)
def test_every_folder_complex_reads_its_index_code(set_name):
    """Every PDBbind-style complex of the three sets carries the code its index names (digits
    included: XK2, 478, SB1, TQ3, 3D1, FX0, 0JZ, 5DN, 86Y, 35B)."""
    for row in _index(set_name):
        cx = read_pdbbind_dir(fixture_root(set_name) / row["pdb_id"].lower())
        assert cx.ligand_code == row["ligand_code"], row["pdb_id"]


def _rewritten(
    tmp_path, set_name: str, pdb_id: str, subst_id: str, subst_name: str, keep_sub: bool
):
    """A copy of a real complex folder whose MOL2 atom records name substructure ``subst_id``
    ``subst_name`` (the SUBSTRUCTURE section dropped unless ``keep_sub``)."""
    src = fixture_root(set_name) / pdb_id
    out = tmp_path / pdb_id
    shutil.copytree(src, out)
    mol2 = out / f"{pdb_id}_ligand.mol2"
    lines, section = [], None
    for line in mol2.read_text(encoding="utf-8").splitlines():
        if line.startswith("@<TRIPOS>"):
            section = line[9:].strip()
            if section == "SUBSTRUCTURE" and not keep_sub:
                continue
        elif section == "SUBSTRUCTURE" and not keep_sub:
            continue
        elif section == "ATOM" and line.strip():
            parts = line.split()
            parts[6], parts[7] = subst_id, subst_name
            line = " ".join(parts)
        lines.append(line)
    mol2.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("pdb_id", "set_name", "subst_id", "subst_name", "keep_sub", "code"),
    [
        ("1hvr", "samples", "263", "XK2263", False, "XK2"),  # Open Babel's writing
        ("1hvr", "samples", "1", "XK2", False, "XK2"),  # no SUBSTRUCTURE record
        ("1hvr", "samples", "1", "XK2263", True, "XK2"),  # the record's residue type decides
        ("1hpv", "samples", "200", "478200", False, "478"),
        ("1hpv", "samples", "1", "478", False, "478"),
        ("1s2g", "heldout", "1", "3D1", False, "3D1"),  # 1 is no residue-number suffix here
        ("1s2g", "heldout", "900", "3D1900", False, "3D1"),
    ],
)
def test_mol2_substructure_names_keep_their_digits(
    tmp_path, pdb_id, set_name, subst_id, subst_name, keep_sub, code
):
    folder = _rewritten(tmp_path, set_name, pdb_id, subst_id, subst_name, keep_sub)
    text = (folder / f"{pdb_id}_ligand.mol2").read_text(encoding="utf-8")
    assert re.search(rf"\b{subst_id} {subst_name}\b", text)
    assert ("@<TRIPOS>SUBSTRUCTURE" in text) is keep_sub
    assert read_pdbbind_dir(folder).ligand_code == code


def test_unusable_substructure_name_gives_no_code():
    """A name that is no 1-5 character code (PDBbind's ``<0>``, Open Babel's ``*****``) gives
    none, so the reader falls back to ``LIG``; a SUBSTRUCTURE type of ``****`` is passed over."""
    assert residue_code({"subst_name": "<0>", "subst_id": "1"}) == ""
    assert residue_code({"subst_name": "LIG", "subst_id": "1", "sub_type": "****"}) == "LIG"

"""No atom is dropped as an alternate location unless it is one (issue 39, part 1): real
multi-chain pockets from tests/data with their chain ids blanked, chain B moved onto chain A's
residue numbers, an alternate-location letter per chain, or insertion codes stripped keep every
atom and every T9 gold H-bond; a loss that cannot be helped is counted and warned."""

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from misi_bench.builder.checks.build_warnings import reading_warnings
from misi_bench.builder.chemistry import segments
from misi_bench.builder.chemistry.hbonds import detect_hbonds
from misi_bench.builder.chemistry.protein import read_protein
from misi_bench.builder.chemistry.structure import read_pdbbind_dir, read_raw_entry
from misi_bench.builder.core.errors import InputError
from misi_bench.builder.core.records import ReadReport

from scripts.fixtures import fixture_root

RECORDS = ("ATOM  ", "HETATM")
#: real pockets with more than one chain (HIV protease dimers, PNP trimer, kinase dimer copy, a
#: receptor with a peptide chain)
MULTI_CHAIN = {
    "1hvr": fixture_root("samples") / "1hvr",
    "1hpv": fixture_root("samples") / "1hpv",
    "1qbs": fixture_root("samples") / "1qbs",
    "1s2g": fixture_root("heldout") / "1s2g",
    "6c83": fixture_root("heldout") / "6c83",
    "7cfn": fixture_root("heldout") / "7cfn",
    "6c83-copy": fixture_root("copies") / "6c83",
}


def _blank(line):
    return line[:21] + " " + line[22:] if line.startswith(RECORDS) else line


def _altloc_per_chain(line):
    """Every record of chain X gets one alternate-location letter of its own (A, B, C, ...)."""
    if line.startswith(RECORDS):
        letter = "ABCDEFGH"[sorted("ABERX").index(line[21])] if line[21] in "ABERX" else "Z"
        return line[:16] + letter + line[17:]
    return line


def _renumber_b(line):
    """Chain B's residues moved 3 numbers on, onto chain A's numbers (other names there)."""
    if line.startswith(RECORDS) and line[21] == "B":
        line = line[:22] + f"{int(line[22:26]) + 3:4d}" + line[26:]
    return line


VARIANTS = {
    "chain ids blank": _blank,
    "chain ids blank, no TER": lambda ln: None if ln.startswith("TER") else _blank(ln),
    "altloc letter per chain": _altloc_per_chain,
    "altloc letter per chain, chain ids blank": lambda ln: _blank(_altloc_per_chain(ln)),
    "chain B on chain A's numbers, chain ids blank": lambda ln: _blank(_renumber_b(ln)),
}


def _edited(src: Path, tmp_path: Path, fn) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    pocket = next(dst.glob("*_pocket.pdb"))
    lines = pocket.read_text().splitlines()
    pocket.write_text("\n".join(x for x in map(fn, lines) if x is not None) + "\n")
    return dst


def _gold(cx):
    """T9's gold H-bonds by place, not label (labels change with the chain ids): residue name,
    protein atom name and coordinates, ligand atom name, distance."""
    return sorted(
        (
            b.res_name,
            b.protein_atom_name,
            tuple(np.round(cx.coords[b.protein_atom], 3)),
            b.ligand_atom_name,
            round(b.distance, 3),
        )
        for b in detect_hbonds(cx)
    )


def _sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("name", sorted(MULTI_CHAIN))
def test_multi_chain_pocket_keeps_every_atom(tmp_path, name, variant):
    original = read_pdbbind_dir(MULTI_CHAIN[name])
    cx = read_pdbbind_dir(_edited(MULTI_CHAIN[name], tmp_path, VARIANTS[variant]))
    assert cx.n_atoms == original.n_atoms
    assert (~cx.is_ligand).sum() == (~original.is_ligand).sum()
    assert len(cx.residues) == len(original.residues)
    np.testing.assert_array_equal(_sorted_rows(cx.coords), _sorted_rows(original.coords))
    assert _gold(cx) == _gold(original) and _gold(original)
    report = cx.read_report
    assert report.lost_atoms == 0 and report.altloc_atoms == original.read_report.altloc_atoms


def test_renumbered_blank_dimer_keeps_its_second_chain(tmp_path):
    """1HVR with chain B on chain A's numbers and both ids blank: gemmi alone dropped 85 pocket
    atoms as microheterogeneity (6 of 10 H-bonds left); each chain is now its own segment."""
    cx = read_pdbbind_dir(
        _edited(MULTI_CHAIN["1hvr"], tmp_path, lambda ln: _blank(_renumber_b(ln)))
    )
    assert (~cx.is_ligand).sum() == 627 and len(detect_hbonds(cx)) == 10
    assert {r.chain for r in cx.residues} == {"_", "_2"}
    assert cx.read_report.segments and cx.read_report.segments[0].startswith("_ -> _2: ")


def test_stripped_insertion_codes_lose_no_atom(tmp_path):
    """1GBT's trypsin pocket numbers residues 184A, 188A, 221A (chymotrypsin numbering); with the
    insertion codes stripped those residues share a number with the next one: gemmi alone
    dropped their 30 atoms. Now each repeat opens a segment and every atom and H-bond stays."""
    src = fixture_root("heldout") / "1gbt"
    original = read_pdbbind_dir(src)
    assert any(r.ins_code for r in original.residues)
    stripped = _edited(
        src, tmp_path, lambda ln: ln[:26] + " " + ln[27:] if ln.startswith(RECORDS) else ln
    )
    cx = read_pdbbind_dir(stripped)
    assert not any(r.ins_code for r in cx.residues)
    assert (~cx.is_ligand).sum() == (~original.is_ligand).sum() == 429
    np.testing.assert_array_equal(_sorted_rows(cx.coords), _sorted_rows(original.coords))
    assert _gold(cx) == _gold(original)
    assert cx.read_report.lost_atoms == 0 and len(cx.read_report.segments) >= 2


@pytest.mark.parametrize("layout", ["one type after the other", "atoms of the two in turn"])
def test_microheterogeneity_is_still_an_alternate_location(raw_refs, tmp_path, layout):
    """A pocket residue of 1A28 modelled as two residue types (altloc A its own, altloc B
    another name 0.3 Å off, as PDB files write microheterogeneity), the records grouped by type
    or written atom by atom in turn: the first type is kept, the second counted as alternate
    locations, not a new segment and not a loss."""
    import gzip

    text = gzip.decompress(raw_refs["1a28"].path.read_bytes()).decode()
    full = read_raw_entry(raw_refs["1a28"].path, "STR")
    pocket = full.residues[len(full.residues) // 2]
    out, first, second = [], [], []
    for line in text.splitlines():
        here = line.startswith("ATOM") and line[21] == pocket.chain
        if here and int(line[22:26]) == pocket.number:
            first.append(line[:16] + "A" + line[17:54] + "  0.60" + line[60:])
            x = f"{float(line[30:38]) + 0.3:8.3f}"
            second.append(
                line[:16] + "B" + "UNK" + line[20:30] + x + line[38:54] + "  0.40" + line[60:]
            )
            continue
        if first:
            if layout == "one type after the other":
                out += first + second
            else:
                out += [ln for pair in zip(first, second) for ln in pair]
            first, second = [], []
        out.append(line)
    path = tmp_path / "1a28_microhet.pdb"
    path.write_text("\n".join(out) + "\n")
    cx = read_raw_entry(path, "STR")
    assert cx.read_report.altloc_atoms == len(
        [ln for ln in out if ln.startswith("ATOM") and ln[16] == "B"]
    )
    assert not cx.read_report.segments and cx.read_report.lost_atoms == 0
    np.testing.assert_array_equal(cx.coords, full.coords)


def test_no_chain_character_left_still_keeps_residues_apart(tmp_path, monkeypatch, caplog):
    """With no chain character left for a text segment (a file that uses all 62), 1HVR's chain B
    on chain A's numbers still keeps its residues of another name (the model is split after
    gemmi reads it: chains ``_2``, ``_3`` ...); residues of the same name that gemmi merged give
    two atoms under one name: counted as ``lost_atoms``, logged as a WARNING naming them (a build
    warning via the manifest's reading record), and the complex is refused since they are in the
    pocket."""
    monkeypatch.setattr(segments, "_FREE_CHARS", "")
    d = _edited(MULTI_CHAIN["1hvr"], tmp_path, lambda ln: _blank(_renumber_b(ln)))
    with caplog.at_level(logging.WARNING):
        protein = read_protein(d / "1hvr_pocket.pdb")
    lost = protein.counts["lost_atoms"]
    assert lost > 0 and protein.counts["altloc_atoms"] == 0
    assert protein.segments and all(n.startswith("_ -> _") for n in protein.segments)
    assert len(protein.coords) + lost == 627
    warned = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert warned and f"{lost} heavy atoms left out" in warned[0] and "chain _" in warned[0]
    record = ReadReport(**protein.counts).as_dict()
    assert record["lost_atoms"] == lost
    lines = reading_warnings({"reading": {"1hvr": record}})
    assert len(lines) == 1 and lines[0].startswith(f"1hvr: {lost} heavy atoms")
    with pytest.raises(InputError, match="two atoms named"):
        read_pdbbind_dir(d)


def test_mmcif_with_insertion_codes_stripped_keeps_every_atom(tmp_path):
    """1GBT's mmCIF with every pdbx_PDB_ins_code set to '?': gemmi alone dropped 30 pocket atoms
    (184A, 188A, 221A share a number with the next residue); the residues are moved to chains of
    their own after reading instead."""
    import gemmi

    src = fixture_root("heldout") / "raw" / "1GBT.cif.gz"
    full = read_raw_entry(src, "GBS")
    doc = gemmi.cif.read(str(src))
    stripped = 0
    for row in doc.sole_block().find("_atom_site.", ["pdbx_PDB_ins_code"]):
        if row[0] not in ("?", "."):
            row[0] = "?"
            stripped += 1
    path = tmp_path / "1gbt_no_insertion_codes.cif"
    path.write_text(doc.as_string())
    cx = read_raw_entry(path, "GBS")
    assert stripped > 30 and not any(r.ins_code for r in cx.residues)
    assert (~cx.is_ligand).sum() == (~full.is_ligand).sum() == 429
    np.testing.assert_array_equal(_sorted_rows(cx.coords), _sorted_rows(full.coords))
    assert _gold(cx) == _gold(full)
    report = cx.read_report
    assert report.lost_atoms == 0 and report.segments[0].startswith("A -> A2: ")


def test_segments_text_untouched_for_well_formed_pockets():
    sets = [fixture_root(name) for name in ("samples", "heldout", "copies")]
    for path in sorted(p for root in sets for p in root.glob("*/*_pocket.pdb")):
        text = path.read_text()
        seg = segments.split_segments(text)
        assert seg.text is text and not seg.notes and not seg.unsplit, path

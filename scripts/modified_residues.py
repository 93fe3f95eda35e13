"""Which H-bonds change when modified residues stay in the pocket (issue 53, item 3).

Run: ``python -m scripts.modified_residues [--extra DIR ...]``. For every complex of the
in-repo sets (the embedded samples, ``tests/data/heldout``, ``tests/data/copies``, the raw
entries of ``tests/data/raw`` and ``tests/data/heldout/raw``) and of each ``--extra`` PDBbind
folder, it reads the complex twice: as the reader now reads it (modified amino acids kept,
``builder/chemistry/modified.py``) and with the records of every kept modified residue removed
from the protein file (what the reader did before: left out). It prints, per H-bond mode, every
bond present in one reading only, and the modified residues found (kept or left out). The list
is copied into docs/hbonds.md by hand.

``--extra`` takes PDBbind-layout folders (``<id>_pocket.pdb`` or ``<id>_protein.pdb``), e.g. a
source file of a sample from its package (``scripts.make_samples`` downloads them) beside the
sample's ligand files.
"""

from __future__ import annotations

import argparse
import gzip
import logging
import shutil
import tempfile
from pathlib import Path

from misi_bench.builder.chemistry.hbonds import HBOND_MODES, detect_hbonds
from misi_bench.builder.chemistry.modified import parent_of
from misi_bench.builder.chemistry.protein import STANDARD_AMINO_ACIDS
from misi_bench.builder.chemistry.structure import load_complex, read_pdbbind_dir
from misi_bench.builder.core.errors import InputError
from misi_bench.builder.core.records import ComplexRef

from .fixtures import fixture_root
from .hbond_modes import raw_entries

log = logging.getLogger(__name__)

PDBBIND_SETS = ("samples", "heldout", "copies")


def _refs(extra: list[Path]) -> list[ComplexRef]:
    refs = []
    for name in PDBBIND_SETS:
        root = fixture_root(name)
        refs += [
            ComplexRef(pdb_id=d.name, path=d, kind="pdbbind")
            for d in sorted(root.iterdir())
            if d.is_dir() and d.name != "raw"
        ]
    refs += [
        ComplexRef(
            pdb_id=key, path=path, kind="raw", ligand_code=code, ligand_chain=ch, ligand_resnum=n
        )
        for key, (path, code, ch, n) in raw_entries().items()
    ]
    refs += [ComplexRef(pdb_id=d.name, path=d, kind="pdbbind") for d in extra]
    return refs


def _kept_modified(cx) -> list[str]:
    return sorted(
        {
            f"{r.chain} {r.name} {r.label.split()[-1]} ({parent_of(r.name)})"
            for r in cx.residues
            if r.name not in STANDARD_AMINO_ACIDS
        }
    )


def _without(ref: ComplexRef, names: set[str], work: Path) -> ComplexRef:
    """A copy of ``ref`` whose protein file lacks every ATOM/HETATM record of residues ``names``
    (PDB format; the old reader's view)."""
    if ref.kind == "pdbbind":
        out = work / ref.path.name
        shutil.copytree(ref.path, out)
        files = [p for p in out.iterdir() if p.name.endswith(("_pocket.pdb", "_protein.pdb"))]
    else:
        out = work / ref.path.name.removesuffix(".gz")
        data = ref.path.read_bytes()
        out.write_bytes(gzip.decompress(data) if ref.path.name.endswith(".gz") else data)
        files = [out]
    for path in files:
        lines = path.read_text().splitlines()
        kept = [
            ln
            for ln in lines
            if not (ln.startswith(("ATOM", "HETATM")) and ln[17:20].strip() in names)
        ]
        path.write_text("\n".join(kept) + "\n")
    return ComplexRef(
        pdb_id=ref.pdb_id,
        path=out,
        kind=ref.kind,
        ligand_code=ref.ligand_code,
        ligand_chain=ref.ligand_chain,
        ligand_resnum=ref.ligand_resnum,
    )


def _bonds(cx, mode: str) -> set[tuple]:
    return {
        (h.chain, h.res_name, h.res_number, h.protein_atom_name, h.ligand_atom_name, h.donor_side)
        for h in detect_hbonds(cx, mode)
    }


def compare_ref(ref: ComplexRef, work: Path) -> tuple[list[str], list[str]]:
    """(modified residues kept, bond changes as text lines) of one complex."""
    now = load_complex(ref) if ref.kind == "raw" else read_pdbbind_dir(ref.path, ref.pdb_id)
    kept = _kept_modified(now)
    if not kept:
        return kept, []
    names = {k.split()[1] for k in kept}
    before = load_complex(_without(ref, names, work))
    lines = []
    for mode in HBOND_MODES:
        new, old = _bonds(now, mode), _bonds(before, mode)
        lines += [f"{ref.pdb_id} {mode} + {' '.join(map(str, b))}" for b in sorted(new - old)]
        lines += [f"{ref.pdb_id} {mode} - {' '.join(map(str, b))}" for b in sorted(old - new)]
    return kept, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--extra", type=Path, nargs="*", default=[])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    refs = _refs(args.extra)
    changes, with_modified = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, ref in enumerate(refs):
            work = Path(tmp) / str(k)
            work.mkdir()
            try:
                kept, lines = compare_ref(ref, work)
            except InputError as exc:
                log.warning("%s", exc)
                continue
            if kept:
                with_modified += 1
                print(f"{ref.pdb_id}: modified residues kept: {'; '.join(kept)}")
            changes += lines
    print(f"{len(refs)} complexes, {with_modified} with a kept modified residue in the pocket")
    print(f"{len(changes)} bonds change (+ new, - gone):")
    for line in changes:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

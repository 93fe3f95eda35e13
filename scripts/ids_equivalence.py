"""Compare complexes read from raw PDB/mmCIF entries (an ``ids:`` source) with the same complexes
read from PDBbind-layout folders: pocket residues, ligand atoms and hydrogen bonds.

    python -m scripts.ids_equivalence --ids LIST.csv --structures DIR \
        [--pdbbind ROOT | --samples]

Prints one line per complex and the differences, if any; exit status 0 when all agree.
"""

from __future__ import annotations

import argparse
import logging

from misi_bench.builder.chemistry.hbonds import detect_hbonds
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.store.id_list import id_list_refs
from misi_bench.builder.store.sources import discover

log = logging.getLogger(__name__)


def compare(raw_cx, folder_cx) -> dict[str, tuple[list[str], list[str]]]:
    """Differences ``{aspect: (only in the raw entry, only in the folder)}``; empty when equal."""

    def aspects(cx):
        return {
            "pocket residues": {f"{r.label} {r.chain}" for r in cx.residues},
            "ligand atoms": {
                f"{n} {e}" for n, e in zip(cx.atom_names[cx.is_ligand], cx.elements[cx.is_ligand])
            },
            "hydrogen bonds": {b.pocket_text() for b in detect_hbonds(cx)},
        }

    a, b = aspects(raw_cx), aspects(folder_cx)
    return {k: (sorted(a[k] - b[k]), sorted(b[k] - a[k])) for k in a if a[k] != b[k]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--ids", required=True, help="id list CSV (pdb_id,ligand[,chain,resnum])")
    ap.add_argument("--structures", required=True, help="folder of the raw entries")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--pdbbind", help="PDBbind-layout root with the same complexes")
    group.add_argument("--samples", action="store_true", help="compare with the embedded samples")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    folders = {r.pdb_id: r for r in discover("samples" if args.samples else args.pdbbind)}
    agree = True
    for ref in id_list_refs(f"ids:{args.ids}", args.structures):
        if ref.pdb_id not in folders:
            print(f"{ref.pdb_id}: not in the PDBbind-layout source")
            continue
        try:
            diff = compare(load_complex(ref), load_complex(folders[ref.pdb_id]))
        except MisiError as exc:
            print(f"{ref.pdb_id}: cannot read ({exc})")
            agree = False
            continue
        print(f"{ref.pdb_id}: {'agree' if not diff else 'DIFFER'}")
        for aspect, (only_raw, only_folder) in diff.items():
            agree = False
            print(
                f"  {aspect}: only from the raw entry {only_raw}; only from the folder {only_folder}"
            )
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())

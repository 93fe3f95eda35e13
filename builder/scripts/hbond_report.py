"""Agreement report: our H-bond detector against PLIP on every embedded sample complex.

Run: ``python -m misi_bench.builder.scripts.hbond_report`` (needs the ``reference`` extra:
plip and openbabel). Prints, per complex, both bond sets as ``RES NUM ATOM CHAIN, LIGATOM`` and
their Jaccard index, then the overall agreement (pooled Jaccard, precision and recall of ours
against PLIP).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from ..chemistry.hbonds import detect_hbonds
from ..chemistry.samples import sample_refs
from ..chemistry.structure import load_complex

log = logging.getLogger(__name__)


def bond_key(chain: str, res_name: str, res_number: int, protein_atom: str, ligand_atom: str) -> str:
    return f"{res_name} {res_number} {protein_atom} {chain}, {ligand_atom}"


def compare(ref) -> dict:
    from .hbond_reference import reference_hbonds  # noqa: PLC0415 (plip is optional)

    cx = load_complex(ref)
    ours = {bond_key(b.chain, b.res_name, b.res_number, b.protein_atom_name, b.ligand_atom_name)
            for b in detect_hbonds(cx)}
    plip = {bond_key(*row) for row in reference_hbonds(ref.path)}
    union = ours | plip
    return {"pdb_id": ref.pdb_id, "ours": sorted(ours), "plip": sorted(plip), "both": sorted(ours & plip),
            "jaccard": (len(ours & plip) / len(union)) if union else 1.0}


def classify_extras(rows: list[dict]) -> dict[str, int]:
    """Why our detector reports bonds PLIP does not: PLIP keeps one bond per donor/acceptor
    group and reports charged pairs as salt bridges, while our definition lists every pair that
    passes the geometric test."""
    kinds = {"sharing an atom with a PLIP bond (second partner of a donor/acceptor)": 0,
             "salt-bridge-like (ARG/LYS/ASP/GLU)": 0, "other": 0}
    for r in rows:
        plip = set(r["plip"])
        p_atoms = {k.split(",")[0] for k in plip}
        l_atoms = {k.split(", ")[1] for k in plip}
        for key in set(r["ours"]) - set(r["both"]):
            prot, lig = key.split(",")[0], key.split(", ")[1]
            if prot in p_atoms or lig in l_atoms:
                kinds["sharing an atom with a PLIP bond (second partner of a donor/acceptor)"] += 1
            elif prot.split()[0] in ("ARG", "LYS", "ASP", "GLU"):
                kinds["salt-bridge-like (ARG/LYS/ASP/GLU)"] += 1
            else:
                kinds["other"] += 1
    return kinds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the per-complex results to this file")
    args = parser.parse_args(argv)
    rows = []
    for ref in sample_refs():
        try:
            rows.append(compare(ref))
        except Exception as exc:  # report and go on
            print(f"{ref.pdb_id}: failed: {exc}", file=sys.stderr)
            continue
        r = rows[-1]
        print(f"\n{r['pdb_id']}: ours {len(r['ours'])}, PLIP {len(r['plip'])}, both {len(r['both'])}, "
              f"Jaccard {r['jaccard']:.2f}")
        for key in sorted(set(r["ours"]) | set(r["plip"])):
            mark = "both" if key in r["both"] else ("ours only" if key in r["ours"] else "PLIP only")
            print(f"  {mark:9s}  {key}")
    n_ours = sum(len(r["ours"]) for r in rows)
    n_plip = sum(len(r["plip"]) for r in rows)
    n_both = sum(len(r["both"]) for r in rows)
    union = n_ours + n_plip - n_both
    mean_j = sum(r["jaccard"] for r in rows) / len(rows) if rows else 0.0
    print(f"\noverall over {len(rows)} complexes: ours {n_ours}, PLIP {n_plip}, both {n_both}; "
          f"pooled Jaccard {n_both / union if union else 1:.3f}, mean per-complex Jaccard {mean_j:.3f}, "
          f"precision vs PLIP {n_both / n_ours if n_ours else 0:.3f}, recall vs PLIP {n_both / n_plip if n_plip else 0:.3f}")
    kinds = classify_extras(rows)
    print("bonds only we find: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

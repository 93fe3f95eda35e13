"""Measurements of the two H-bond modes (issue 23) on the samples and the held-out sets.

Run: ``python -m scripts.hbond_modes [--set samples|heldout|copies|all]
[--json FILE]`` (needs the ``reference`` extra: plip and openbabel). Per set and mode it prints:

* bonds per complex and the donor-acceptor distance distribution (shares above 3.5, 3.8, 4.1 Å);
* agreement with PLIP 3.0.1 (``hbond_report.compare``): recall of its bonds, recall of its short
  straight bonds (D...A <= 3.3 Å, D-H...A >= 140 degrees), precision against its candidates;
* the share of T4/T8/T9 answers that change between the modes, over every question the set
  could give: T9 one answer per complex, T4 one per pocket residue with a bond in either mode,
  T8 one per bond (a bond of one mode only changes or removes that question);
* bonds whose existence depends on a modelled rotatable hydrogen (``rotamer_sensitive``).

The figures are written to docs/hbonds.md by hand from this output. ``--diff`` prints the bonds
that differ between the modes with their reasons; ``--dump FILE`` writes every bond of the three
sets in both modes, and ``--changes FILE`` (run after a detector change) lists every bond that
differs from such a dump, with the chimerax verdict now (docs/hbonds.md, builder 0.7.0).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from misi_bench.builder.chemistry.hbond_rotamers import rotamer_sensitive
from misi_bench.builder.chemistry.hbonds import (
    HBOND_MODES,
    detect_hbonds,
    format_pocket_answer,
    format_residue_answer,
)
from misi_bench.builder.chemistry.structure import read_pdbbind_dir

from .fixtures import fixture_root
from .hbond_report import SETS, compare, pooled, set_dirs

DISTANCE_EDGES = (3.0, 3.3, 3.5, 3.8, 4.1)


def distance_summary(distances: list[float]) -> dict:
    d = np.asarray(distances, dtype=float)
    if not len(d):
        return {"n": 0}
    out = {"n": len(d), "median": round(float(np.median(d)), 2), "max": round(float(d.max()), 2)}
    for edge in (3.5, 3.8, 4.1):
        out[f"over_{edge}"] = round(float(np.mean(d > edge)), 3)
    bins = np.histogram(d, bins=(0.0, *DISTANCE_EDGES, 10.0))[0]
    out["histogram"] = {
        f"{lo:g}-{hi:g}": int(n)
        for lo, hi, n in zip((0.0, *DISTANCE_EDGES), (*DISTANCE_EDGES, 10.0), bins)
    }
    return out


def answer_changes(per_mode: dict[str, tuple]) -> dict:
    """T4/T8/T9 answers of one complex that differ between the modes (see the module docstring)."""
    a, b = (per_mode[m] for m in HBOND_MODES)
    t9 = int(format_pocket_answer(a) != format_pocket_answer(b))
    residues = {(x.chain, x.res_number, x.ins_code) for x in (*a, *b)}
    t4 = sum(
        format_residue_answer([x for x in a if (x.chain, x.res_number, x.ins_code) == r])
        != format_residue_answer([x for x in b if (x.chain, x.res_number, x.ins_code) == r])
        for r in residues
    )
    ta, tb = {x.pocket_text() for x in a}, {x.pocket_text() for x in b}
    return {"t9": (t9, 1), "t4": (int(t4), len(residues)), "t8": (len(ta ^ tb), len(ta | tb))}


def measure(name: str, refs) -> dict:
    out: dict = {}
    changes = {"t4": [0, 0], "t8": [0, 0], "t9": [0, 0]}
    bonds: dict[str, list] = {m: [] for m in HBOND_MODES}
    rotamer = {m: [0, 0] for m in HBOND_MODES}
    rows: dict[str, list] = {m: [] for m in HBOND_MODES}
    for d, ref in refs:
        cx = read_pdbbind_dir(d)
        per_mode = {m: detect_hbonds(cx, m) for m in HBOND_MODES}
        for m in HBOND_MODES:
            bonds[m].append(per_mode[m])
            rows[m].append(compare(d, ref, mode=m))
            vanish, appear = rotamer_sensitive(cx, m)
            rotamer[m][0] += len(vanish) + len(appear)
            rotamer[m][1] += len(per_mode[m])
        for key, (n, total) in answer_changes(per_mode).items():
            changes[key][0] += n
            changes[key][1] += total
    for m in HBOND_MODES:
        s = pooled(rows[m])
        dist = distance_summary([b.distance for bs in bonds[m] for b in bs])
        out[m] = {
            "complexes": len(refs),
            "bonds": s["ours"],
            "per_complex": round(s["ours"] / max(len(refs), 1), 2),
            "distances": dist,
            "plip_bonds": s["plip"],
            "recall": round(s["recall"], 3),
            "short_straight": s["short_straight"],
            "recall_short": round(s["recall_short"], 3),
            "precision": round(s["precision"], 3),
            "missing": s["missing"],
            "rotamer_dependent": rotamer[m][0],
        }
    out["changed"] = {
        k: {"changed": n, "of": t, "share": round(n / t, 3) if t else 0.0}
        for k, (n, t) in changes.items()
    }
    return out


def _plip_reason(cx, key: str) -> str:
    """Why the plip rule does not find a bond the chimerax mode finds."""
    from misi_bench.builder.chemistry.hbonds import detect_plip_hbonds

    if key in {b.pocket_text() for b in detect_plip_hbonds(cx, one_per_hydrogen="none")}:
        return "plip: a donor without known hydrogens bonds only its nearest acceptors (one per H)"
    if key in {
        b.pocket_text()
        for b in detect_plip_hbonds(
            cx, min_dha=0.0, min_neighbour_angle=0.0, one_per_hydrogen="none"
        )
    }:
        return "plip: D-H...A below 100 degrees (or a neighbour angle below 70)"
    return "plip: not a donor/acceptor pair of its typing"


def _chimerax_reason(cx, bond) -> str:
    """Why the chimerax mode does not find a bond the plip rule finds (each direction tried)."""
    from misi_bench.builder.chemistry.hbonds import chimerax_graph
    from misi_bench.builder.chemistry.mills_dean import explain_pair

    g = chimerax_graph(cx)
    p, lg = bond.protein_atom, bond.ligand_atom
    first, second = ((p, lg), (lg, p)) if bond.donor_side == "protein" else ((lg, p), (p, lg))
    reasons = [explain_pair(g, *first)]
    other = explain_pair(g, *second)
    if "is no donor" not in other and "is no acceptor" not in other:
        reasons.append(f"reverse: {other}")
    return "chimerax: " + "; ".join(reasons)


def diff_markdown(name: str) -> str:
    """Markdown list of every bond that differs between the modes on one set, with its reason."""
    lines = ["| complex | bond (T9 text) | D...A Å | only in | reason |", "|---|---|---|---|---|"]
    for d in set_dirs(name):
        cx = read_pdbbind_dir(d)
        a = {b.pocket_text(): b for b in detect_hbonds(cx, "chimerax")}
        b = {x.pocket_text(): x for x in detect_hbonds(cx, "plip")}
        for key in sorted(set(a) ^ set(b)):
            if key in a:
                lines.append(
                    f"| {d.name} | {key} | {a[key].distance:.2f} | chimerax | {_plip_reason(cx, key)} |"
                )
            else:
                lines.append(
                    f"| {d.name} | {key} | {b[key].distance:.2f} | plip | {_chimerax_reason(cx, b[key])} |"
                )
    return "\n".join(lines)


#: the in-repo sets of whole PDB/mmCIF entries (``read_raw_entry``), each with an index.csv
RAW_SETS = ("raw", "heldout/raw")


def raw_entries() -> dict[str, tuple]:
    """{"raw/<id>": (path, ligand code, chain, residue number)} of the in-repo raw entries."""
    import csv

    out = {}
    for name in RAW_SETS:
        root = fixture_root(name)
        with open(root / "index.csv", encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                resnum = int(row["ligand_resnum"]) if row["ligand_resnum"] else None
                out[f"{name}/{row['pdb_id'].lower()}"] = (
                    root / row["file"],
                    row["ligand_code"],
                    row["ligand_chain"] or None,
                    resnum,
                )
    return out


def load_key(key: str):
    """The complex of a ``dump_bonds`` key (a set folder or a raw entry)."""
    from misi_bench.builder.chemistry.structure import read_raw_entry

    raw = raw_entries()
    if key in raw:
        path, code, chain, resnum = raw[key]
        return read_raw_entry(path, code, chain=chain, resnum=resnum)
    return read_pdbbind_dir(fixture_root(key))


def dump_bonds() -> dict:
    """Every bond of the three sets and the raw entries in both modes: {"set/complex": {mode:
    [[T9 text, D...A, donor side], ...]}} (the input of ``--changes``; write one before a
    detector change)."""
    keys = [f"{name}/{d.name}" for name in SETS for d in set_dirs(name)] + list(raw_entries())
    out = {}
    for key in keys:
        cx = load_key(key)
        out[key] = {
            mode: [[b.pocket_text(), round(b.distance, 3), b.donor_side] for b in bonds]
            for mode in HBOND_MODES
            for bonds in (detect_hbonds(cx, mode),)
        }
    return out


def changes_markdown(before: dict) -> str:
    """Markdown list of every bond (T9 text and donor side, per mode) that differs between a
    ``dump_bonds`` file written before a change and the detector now, with the chimerax verdict
    now (its classes, or its failing check) for each direction of the pair."""
    from misi_bench.builder.chemistry.hbonds import chimerax_graph
    from misi_bench.builder.chemistry.mills_dean import explain_pair

    now = dump_bonds()
    lines = [
        "| complex | mode | bond (T9 text) | D...A Å | change | chimerax now |",
        "|---|---|---|---|---|---|",
    ]
    for key in sorted(now):
        for mode in HBOND_MODES:
            old = {tuple(b[0:1] + b[2:]): b for b in before.get(key, {}).get(mode, [])}
            new = {tuple(b[0:1] + b[2:]): b for b in now[key][mode]}
            for bond in sorted(set(old) ^ set(new)):
                text, side = bond
                row = new.get(bond) or old[bond]
                change = f"{'gained' if bond in new else 'lost'} ({side} donor)"
                cx = load_key(key)
                found = detect_hbonds(cx, "plip") + detect_hbonds(cx, "chimerax")
                hb = next((b for b in found if b.pocket_text() == text), None)
                verdict = ""
                if hb is not None:
                    pair = (hb.protein_atom, hb.ligand_atom)
                    verdict = explain_pair(
                        chimerax_graph(cx), *(pair if side == "protein" else pair[::-1])
                    )
                lines.append(f"| {key} | {mode} | {text} | {row[1]:.2f} | {change} | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from rdkit import Chem  # noqa: F401 (RDKit must load before Open Babel, else it crashes)

    from .hbond_reference import reference_sets

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=[*SETS, "all"], default="all")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print the bonds that differ between the modes "
        "(markdown, with reasons) instead; needs no PLIP",
    )
    parser.add_argument("--dump", help="write every bond of the three sets (both modes) here")
    parser.add_argument(
        "--changes",
        metavar="BEFORE_JSON",
        help="print the bonds that differ from a --dump file written before a change (markdown)",
    )
    args = parser.parse_args(argv)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            json.dump(dump_bonds(), f, indent=1, sort_keys=True)
        return 0
    if args.changes:
        with open(args.changes, encoding="utf-8") as f:
            print(changes_markdown(json.load(f)))
        return 0
    if args.diff:
        for name in SETS if args.set == "all" else (args.set,):
            print(f"\n### {name}\n\n{diff_markdown(name)}")
        return 0
    names = SETS if args.set == "all" else (args.set,)
    result = {}
    for name in names:
        refs = [(d, reference_sets(d)) for d in set_dirs(name)]
        result[name] = measure(name, refs)
        r = result[name]
        print(f"\n=== {name} ({len(refs)} complexes) ===")
        for m in HBOND_MODES:
            x = r[m]
            dist = x["distances"]
            print(
                f"{m:9s} bonds {x['bonds']:4d} ({x['per_complex']:.2f}/complex), D...A median {dist.get('median')} "
                f"max {dist.get('max')}, >3.5 {dist.get('over_3.5')}, >3.8 {dist.get('over_3.8')}, "
                f">4.1 {dist.get('over_4.1')}; PLIP recall {x['recall']:.3f} ({x['plip_bonds']}), short straight "
                f"{x['recall_short']:.3f} ({x['short_straight']}), precision {x['precision']:.3f}; "
                f"rotamer-dependent {x['rotamer_dependent']}"
            )
            print(f"          histogram {dist.get('histogram')}")
        print(
            "changed between modes: "
            + ", ".join(
                f"{k.upper()} {v['changed']}/{v['of']} ({v['share']:.2f})"
                for k, v in sorted(r["changed"].items())
            )
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

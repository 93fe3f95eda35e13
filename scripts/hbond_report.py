"""Agreement report: our H-bond detector against PLIP 3.0.1 on real complexes.

Run: ``python -m scripts.hbond_report [--set samples|heldout|copies|all]
[--sweep] [--hydrogens input|shared]`` (needs the ``reference`` extra: plip and openbabel). For
each complex it prints our bonds, PLIP's bonds and PLIP's candidates (its bonds, the pairs it
drops by its one-bond-per-donor and salt-bridge rules, and the N/O pairs of its salt bridges'
charged groups within 4.1 Å), then per set:

* recall = |ours ∩ PLIP bonds| / |PLIP bonds|, precision = |ours ∩ PLIP candidates| / |ours|,
  pooled over the set and per complex (precision without the salt-bridge pairs too);
* our bonds outside PLIP's candidates and PLIP's bonds we miss, each classified (by where the
  donor's hydrogens come from: input, placed on a planar N, or unknown);
* complexes where we report more than twice PLIP's bonds.

``--hydrogens input`` gives each tool the input files' hydrogens (PLIP adds the missing polar
ones itself); ``shared`` gives both one protonated copy of each complex (``hbond_shared_h``), the
issue's setting. The ``samples`` set (``builder/data/samples``) is the one the detector was tuned
on; ``heldout`` (``tests/data/heldout``) and ``copies`` (``tests/data/copies``: other
crystallographic copies of ligands of both) were not tuned on. ``--sweep`` re-runs the detector
with the alternatives weighed for the distance limit, the use of input hydrogens on rotatable
donors, the bonds per hydrogen, and the ligand chemistry source (SDF or MOL2), printing pooled
figures for each (PLIP runs once per complex).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from misi_bench.builder.chemistry.hbonds import MAX_DISTANCE, detect_hbonds, donor_hydrogen_source
from misi_bench.builder.chemistry.structure import read_pdbbind_dir
from misi_bench.builder.core.records import Complex

from .fixtures import fixture_root

SETS = ("samples", "heldout", "copies")
CHARGED_SIDE_CHAIN = {
    ("ASP", "OD1"),
    ("ASP", "OD2"),
    ("GLU", "OE1"),
    ("GLU", "OE2"),
    ("ARG", "NE"),
    ("ARG", "NH1"),
    ("ARG", "NH2"),
    ("LYS", "NZ"),
    ("HIS", "ND1"),
    ("HIS", "NE2"),
}


def bond_key(
    chain: str, res_name: str, res_number: int, protein_atom: str, ligand_atom: str
) -> str:
    return f"{res_name} {res_number} {protein_atom} {chain}, {ligand_atom}"


def set_dirs(name: str) -> list[Path]:
    """Complex folders of one data set (``samples`` or ``heldout``), in index order."""
    root = fixture_root(name)
    ids = [
        line.split(",")[0].lower()
        for line in (root / "index.csv").read_text().splitlines()[1:]
        if line
    ]
    return [root / pid for pid in ids]


def load(sample_dir: Path, ligand_chemistry: str = "sdf") -> Complex:
    """The complex of a folder, its ligand chemistry from the SDF (default) or from the MOL2."""
    if ligand_chemistry == "sdf":
        return read_pdbbind_dir(sample_dir)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / sample_dir.name
        shutil.copytree(sample_dir, copy, ignore=shutil.ignore_patterns("*.sdf"))
        return read_pdbbind_dir(copy)


def _atom(cx: Complex, key: str) -> tuple[int, int] | None:
    """(protein atom, ligand atom) indices of a ``bond_key``."""
    head, lig_name = key.split(", ", 1)
    res_name, number, atom, chain = (head.split(" ") + [""])[:4]
    prot = [
        i
        for i in cx.pocket_indices
        if cx.res_names[i] == res_name
        and str(cx.res_numbers[i]) == number
        and cx.atom_names[i] == atom
        and cx.chain_ids[i] == chain
    ]
    lig = [i for i in cx.ligand_indices if cx.atom_names[i] == lig_name]
    return (int(prot[0]), int(lig[0])) if prot and lig else None


def classify_extra(cx: Complex, key: str) -> str:
    """Why one of our bonds is not among PLIP's candidates."""
    pair = _atom(cx, key)
    if pair and (
        (str(cx.res_names[pair[0]]), str(cx.atom_names[pair[0]])) in CHARGED_SIDE_CHAIN
        or cx.formal_charges[pair[1]] != 0
    ):
        return "charged pair (salt bridge with H-bond geometry)"
    if pair:
        p, lg = pair
        kinds = {
            donor_hydrogen_source(cx, d)
            for d, a in ((p, lg), (lg, p))
            if cx.is_donor[d] and cx.is_acceptor[a]
        }
        if "unknown" in kinds:
            return (
                "rotatable donor without input hydrogens: PLIP's placed hydrogen points elsewhere"
            )
        if "placed" in kinds:
            return (
                "planar N-H placed from the heavy-atom frame: PLIP's hydrogen differs or is missing"
            )
    return "neutral pair PLIP's hydrogens do not point at"


def classify_missing(cx: Complex, key: str, max_distance: float, loose: set[str]) -> str:
    """Why a PLIP bond is not one of ours (``loose``: our bonds without one-bond-per-hydrogen)."""
    pair = _atom(cx, key)
    if pair is None:
        return "atom not in our record"
    p, lg = pair
    if not ((cx.is_donor[p] and cx.is_acceptor[lg]) or (cx.is_donor[lg] and cx.is_acceptor[p])):
        return "not a donor-acceptor pair in our typing"
    d = float(((cx.coords[p] - cx.coords[lg]) ** 2).sum() ** 0.5)
    if d > max_distance:
        return f"distance above {max_distance:g} Å"
    if key in loose:
        return (
            "the donor bonds nearer acceptors (its hydrogens unknown: as many bonds as hydrogens)"
        )
    donors = [x for x, a in ((p, lg), (lg, p)) if cx.is_donor[x] and cx.is_acceptor[a]]
    if any(donor_hydrogen_source(cx, x) == "unknown" for x in donors):
        return "rotatable donor without input hydrogens: a neighbour angle below the limit"
    return "D-H...A angle below the limit with the input or placed hydrogens"


def ours(cx: Complex, mode: str = "plip", **kwargs) -> set[str]:
    return {
        bond_key(b.chain, b.res_name, b.res_number, b.protein_atom_name, b.ligand_atom_name)
        for b in detect_hbonds(cx, mode, **kwargs)
    }


def compare(
    ref_or_dir,
    reference: dict | None = None,
    ligand_chemistry: str = "sdf",
    mode: str = "plip",
    **kwargs,
) -> dict:
    """Our bonds (H-bond ``mode``; plip options in ``kwargs``) against PLIP's on one complex
    folder (or ``ComplexRef``); ``reference`` reuses a ``hbond_reference.reference_sets`` result."""
    sample_dir = Path(getattr(ref_or_dir, "path", ref_or_dir))
    cx = load(sample_dir, ligand_chemistry)
    if reference is None:
        from .hbond_reference import reference_sets  # noqa: PLC0415 (plip is optional)

        reference = reference_sets(sample_dir)
    mine = ours(cx, mode, **kwargs)
    plip = {bond_key(*row) for row in reference["bonds"]}
    short = {bond_key(*row) for row in reference.get("short_straight", ())}
    strict = {bond_key(*row) for row in reference["candidates"]}
    cand = strict | {bond_key(*row) for row in reference.get("salt_bridges", ())}
    max_distance = kwargs.get("max_distance", MAX_DISTANCE)
    loose = ours(cx, mode, **{**kwargs, "one_per_hydrogen": "none"}) if mode == "plip" else mine
    union = mine | plip
    return {
        "pdb_id": sample_dir.name.lower(),
        "ours": sorted(mine),
        "plip": sorted(plip),
        "candidates": sorted(cand),
        "both": sorted(mine & plip),
        "short_straight": sorted(short),
        "short_found": sorted(mine & short),
        "precise": sorted(mine & cand),
        "precise_strict": sorted(mine & strict),
        "recall": len(mine & plip) / len(plip) if plip else 1.0,
        "precision": len(mine & cand) / len(mine) if mine else 1.0,
        "jaccard": len(mine & plip) / len(union) if union else 1.0,
        "extra": {k: classify_extra(cx, k) for k in sorted(mine - cand)},
        "missing": {
            k: (
                classify_missing(cx, k, max_distance, loose)
                if mode == "plip"
                else "outside the Mills & Dean class limits"
            )
            for k in sorted(plip - mine)
        },
        "over_twice": len(mine) > 2 * len(plip),
    }


def pooled(rows: list[dict]) -> dict:
    n_ours = sum(len(r["ours"]) for r in rows)
    n_plip = sum(len(r["plip"]) for r in rows)
    kinds_extra: dict[str, int] = {}
    kinds_missing: dict[str, int] = {}
    for r in rows:
        for kind in r["extra"].values():
            kinds_extra[kind] = kinds_extra.get(kind, 0) + 1
        for kind in r["missing"].values():
            kinds_missing[kind] = kinds_missing.get(kind, 0) + 1
    return {
        "complexes": len(rows),
        "ours": n_ours,
        "plip": n_plip,
        "candidates": sum(len(r["candidates"]) for r in rows),
        "recall": sum(len(r["both"]) for r in rows) / n_plip if n_plip else 1.0,
        "short_straight": sum(len(r.get("short_straight", ())) for r in rows),
        "recall_short": (
            sum(len(r.get("short_found", ())) for r in rows)
            / max(sum(len(r.get("short_straight", ())) for r in rows), 1)
        ),
        "precision": sum(len(r["precise"]) for r in rows) / n_ours if n_ours else 1.0,
        "precision_strict": sum(len(r["precise_strict"]) for r in rows) / n_ours if n_ours else 1.0,
        "extra": kinds_extra,
        "missing": kinds_missing,
        "over_twice": [r["pdb_id"] for r in rows if r["over_twice"]],
    }


def _print_set(name: str, rows: list[dict]) -> dict:
    print(f"\n=== {name} ===")
    for r in rows:
        flag = "  MORE THAN TWICE PLIP" if r["over_twice"] else ""
        print(
            f"\n{r['pdb_id']}: ours {len(r['ours'])}, PLIP {len(r['plip'])} (candidates {len(r['candidates'])}), "
            f"recall {r['recall']:.2f}, precision {r['precision']:.2f}{flag}"
        )
        for key in sorted(set(r["ours"]) | set(r["plip"])):
            if key in r["both"]:
                mark = "both"
            elif key in r["ours"]:
                mark = (
                    "ours, PLIP candidate"
                    if key in r["precise"]
                    else f"ours only: {r['extra'][key]}"
                )
            else:
                mark = f"PLIP only: {r['missing'][key]}"
            print(f"  {key:34s} {mark}")
    s = pooled(rows)
    print(
        f"\n{name}: {s['complexes']} complexes, ours {s['ours']}, PLIP {s['plip']}, candidates {s['candidates']}: "
        f"pooled recall {s['recall']:.3f}, pooled precision {s['precision']:.3f} "
        f"(without salt-bridge pairs {s['precision_strict']:.3f})"
    )
    print(
        "  ours outside PLIP's candidates: "
        + (", ".join(f"{n} {k}" for k, n in s["extra"].items()) or "none")
    )
    print(
        "  PLIP bonds we miss: "
        + (", ".join(f"{n} {k}" for k, n in s["missing"].items()) or "none")
    )
    print("  more than twice PLIP's bonds: " + (", ".join(s["over_twice"]) or "none"))
    return s


SWEEP = [
    ("default (4.1 Å, input H on all donors, bifurcated if H known, SDF)", {}),
    ("distance 3.5 Å", {"max_distance": 3.5}),
    ("distance 3.7 Å", {"max_distance": 3.7}),
    ("distance 3.9 Å (3.5 + 0.4)", {"max_distance": 3.9}),
    ("distance 4.3 Å", {"max_distance": 4.3}),
    ("input H on rotatable donors ignored", {"rotatable_h": False}),
    ("one bond per known hydrogen too (0.2)", {"one_per_hydrogen": "all"}),
    ("every acceptor per donor", {"one_per_hydrogen": "none"}),
    ("ligand chemistry from the MOL2", {"ligand_chemistry": "mol2"}),
]


def main(argv: list[str] | None = None) -> int:
    from rdkit import Chem  # noqa: F401, PLC0415 (RDKit must load before Open Babel, else it crashes)

    from .hbond_reference import reference_sets  # noqa: PLC0415 (plip is optional)

    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=[*SETS, "all"], default="all")
    parser.add_argument(
        "--sweep", action="store_true", help="also print pooled figures of the alternatives"
    )
    parser.add_argument("--json", help="also write the per-complex results to this file")
    parser.add_argument(
        "--hydrogens",
        choices=["input", "shared"],
        default="input",
        help="input: each tool gets the input files' hydrogens (PLIP adds missing polar ones); "
        "shared: both read one protonated copy (hbond_shared_h)",
    )
    args = parser.parse_args(argv)
    names = SETS if args.set == "all" else (args.set,)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {name: set_dirs(name) for name in names}
        if args.hydrogens == "shared":
            from .hbond_shared_h import shared_h_copy  # noqa: PLC0415 (openbabel is optional)

            dirs = {
                name: [shared_h_copy(d, Path(tmp) / name) for d in ds] for name, ds in dirs.items()
            }
        refs = {name: [(d, reference_sets(d)) for d in dirs[name]] for name in names}
        _report(names, refs, args)
    return 0


def _report(names, refs: dict, args) -> None:
    out: dict = {}
    for name in names:
        rows = []
        for d, ref in refs[name]:
            try:
                rows.append(compare(d, ref))
            except Exception as exc:  # noqa: BLE001 (report and go on)
                print(f"{d.name}: failed: {exc}", file=sys.stderr)
        out[name] = {"pooled": _print_set(name, rows), "complexes": rows}
    if args.sweep:
        print("\n=== alternatives (pooled recall / precision) ===")
        for label, kwargs in SWEEP:
            figures = []
            for name in names:
                s = pooled([compare(d, ref, **kwargs) for d, ref in refs[name]])
                figures.append(
                    f"{name} {s['recall']:.3f} / {s['precision']:.3f} ({s['ours']} bonds)"
                )
            print(f"  {label:58s} " + "; ".join(figures))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())

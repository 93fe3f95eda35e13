"""The ``misi-bench`` command line. Each subcommand is a thin wrapper over the library.

Errors about inputs print one line ``misi-bench: error: <input>: <reason>`` and exit 2;
they never print a traceback (set MISI_BENCH_DEBUG=1 to see one).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys


from .errors import MisiError

log = logging.getLogger("misi_bench")


def _add_complex_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="a PDBbind complex folder <pdbid>/, a PDB/mmCIF file, or 'sample:<pdbid>'")
    p.add_argument("--ligand", help="ligand residue name (CCD code) for a PDB/mmCIF file")
    p.add_argument("--chain", help="chain of the ligand copy to use (PDB/mmCIF)")
    p.add_argument("--resnum", type=int, help="residue number of the ligand copy to use (PDB/mmCIF)")
    p.add_argument("--pocket-cutoff", type=float, default=10.0, help="pocket radius around the ligand, Å (default 10)")


def _load(args: argparse.Namespace):
    from .structure import load_complex, ref_for_path  # noqa: PLC0415

    if args.path.startswith("sample:"):
        from .samples import sample_refs  # noqa: PLC0415

        wanted = args.path.split(":", 1)[1].lower()
        refs = [r for r in sample_refs() if r.pdb_id == wanted]
        if not refs:
            raise MisiError(f"{args.path}: no such embedded sample")
        ref = refs[0]
    else:
        ref = ref_for_path(args.path, args.ligand, args.chain, args.resnum)
    return load_complex(ref, pocket_cutoff=args.pocket_cutoff)


def cmd_inspect(args: argparse.Namespace) -> int:
    from .hbonds import detect_hbonds  # noqa: PLC0415

    cx = _load(args)
    bonds = detect_hbonds(cx)
    lig = cx.ligand_indices
    info = {
        "pdb_id": cx.pdb_id,
        "ligand_code": cx.ligand_code,
        "source": cx.source,
        "n_atoms": int(cx.n_atoms),
        "n_pocket_atoms": int(len(cx.pocket_indices)),
        "n_ligand_atoms": int(len(lig)),
        "n_hydrogens_known": int(len(cx.h_coords)),
        "pocket_residues": [f"{r.label} {r.chain}" for r in cx.residues],
        "ligand_atoms": [{"name": str(cx.atom_names[i]), "element": str(cx.elements[i]),
                          "donor": bool(cx.is_donor[i]), "acceptor": bool(cx.is_acceptor[i])} for i in lig],
        "hbonds": [b.pocket_text() for b in bonds],
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{cx.pdb_id}  ligand {cx.ligand_code}  ({cx.source})")
    print(f"atoms: {info['n_atoms']} heavy ({info['n_pocket_atoms']} pocket, {info['n_ligand_atoms']} ligand), "
          f"{info['n_hydrogens_known']} hydrogens known")
    print(f"pocket residues ({len(cx.residues)}): " + ", ".join(info["pocket_residues"]))
    print("ligand atoms: " + ", ".join(
        a["name"] + ("[D]" if a["donor"] else "") + ("[A]" if a["acceptor"] else "") for a in info["ligand_atoms"]))
    print(f"hydrogen bonds ({len(bonds)}):")
    for text in info["hbonds"]:
        print(f"  {text}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from misi_bench import __version__  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="misi-bench", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"misi-bench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("inspect", help="atoms, pocket residues, ligand atoms and hydrogen bonds of one complex")
    _add_complex_args(p)
    p.add_argument("--json", action="store_true", help="print JSON (hydrogen bonds under the key 'hbonds')")
    p.set_defaults(func=cmd_inspect)

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    return parser


_EXTRA_COMMANDS: list = []


def register(fn):
    """Decorator for modules that add subcommands (kept here so the parser is built in one place)."""
    _EXTRA_COMMANDS.append(fn)
    return fn


def main(argv: list[str] | None = None) -> int:
    from . import cli_commands  # noqa: F401,PLC0415  (registers the other subcommands)

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if argv and argv[0] in ("lmms-eval", "vlmevalkit", "lm-eval"):
        passthrough = argv[1:]
        argv = argv[:1]
    args = parser.parse_args(argv)
    args.passthrough = passthrough
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("numexpr", "urllib3", "httpx", "filelock", "fsspec"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except MisiError as exc:
        if os.environ.get("MISI_BENCH_DEBUG"):
            raise
        print(f"misi-bench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("misi-bench: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        if os.environ.get("MISI_BENCH_DEBUG"):
            raise
        print(f"misi-bench: error: {exc}", file=sys.stderr)
        return 2



"""Commands on one complex: ``inspect``, ``render``, ``preview``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.constants import DEFAULT_IMAGE_SIZE, DEFAULT_POCKET_CUTOFF
from ..core.errors import MisiError


def add_complex_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path", help="a PDBbind complex folder <pdbid>/, a PDB/mmCIF file, or 'sample:<pdbid>'"
    )
    p.add_argument("--ligand", help="ligand residue name (CCD code) for a PDB/mmCIF file")
    p.add_argument("--chain", help="chain of the ligand copy to use (PDB/mmCIF)")
    p.add_argument(
        "--resnum", type=int, help="residue number of the ligand copy to use (PDB/mmCIF)"
    )
    p.add_argument(
        "--pocket-cutoff",
        type=float,
        default=DEFAULT_POCKET_CUTOFF,
        help=f"pocket radius around the ligand, Å (default {DEFAULT_POCKET_CUTOFF:g})",
    )
    p.add_argument(
        "--hbonds",
        default="chimerax",
        metavar="MODE",
        help="H-bond criteria: chimerax (default) or plip (see `build --hbonds`)",
    )


def load_from_args(args: argparse.Namespace):
    from ..chemistry.structure import load_complex, ref_for_path  # noqa: PLC0415

    if args.path.startswith("sample:"):
        from ..chemistry.samples import sample_refs  # noqa: PLC0415

        wanted = args.path.split(":", 1)[1].lower()
        refs = [r for r in sample_refs() if r.pdb_id == wanted]
        if not refs:
            import difflib  # noqa: PLC0415

            names = sorted(r.pdb_id for r in sample_refs())
            close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.5)
            hint = f"did you mean sample:{close[0]}? " if close else ""
            raise MisiError(
                f"{args.path}: no such embedded sample; {hint}the samples are {', '.join(names)}"
            )
        ref = refs[0]
    else:
        ref = ref_for_path(args.path, args.ligand, args.chain, args.resnum)
    return load_complex(ref, pocket_cutoff=args.pocket_cutoff)


def cmd_inspect(args: argparse.Namespace) -> int:
    from ..chemistry.hbonds import (
        check_mode,  # noqa: PLC0415
        detect_hbonds,  # noqa: PLC0415
    )

    try:
        check_mode(args.hbonds)
    except ValueError as exc:
        raise MisiError(str(exc)) from None
    cx = load_from_args(args)
    bonds = detect_hbonds(cx, args.hbonds)
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
        "ligand_atoms": [
            {
                "name": str(cx.atom_names[i]),
                "element": str(cx.elements[i]),
                "donor": bool(cx.is_donor[i]),
                "acceptor": bool(cx.is_acceptor[i]),
            }
            for i in lig
        ],
        "hbond_mode": args.hbonds,
        "hbonds": [b.pocket_text() for b in bonds],
        "reading": cx.read_report.as_dict(),
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"{cx.pdb_id}  ligand {cx.ligand_code}  ({cx.source})")
    print(
        f"atoms: {info['n_atoms']} heavy ({info['n_pocket_atoms']} pocket, {info['n_ligand_atoms']} ligand), "
        f"{info['n_hydrogens_known']} hydrogens known"
    )
    print(f"pocket residues ({len(cx.residues)}): " + ", ".join(info["pocket_residues"]))
    print("reading: " + ", ".join(f"{k} {v}" for k, v in info["reading"].items()))
    print(
        "ligand atoms: "
        + ", ".join(
            a["name"] + ("[D]" if a["donor"] else "") + ("[A]" if a["acceptor"] else "")
            for a in info["ligand_atoms"]
        )
    )
    print(f"hydrogen bonds ({len(bonds)}, --hbonds {args.hbonds}):")
    for text in info["hbonds"]:
        print(f"  {text}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from ..operations.language import parse_operations  # noqa: PLC0415
    from ..scene.cache import render_png  # noqa: PLC0415
    from ..scene.requests import RenderRequest  # noqa: PLC0415
    from ..tasks.annotation import annotate  # noqa: PLC0415

    cx = load_from_args(args)
    ann = annotate(cx, args.size, getattr(args, "hbonds", "chimerax"))
    ops = parse_operations(args.ops) if args.ops else ()
    atoms = tuple(range(cx.n_atoms))
    req = RenderRequest(
        atoms=atoms, groups=((atoms, ops),) if ops else (), view=args.view, camera=ann.camera
    )
    Path(args.out).write_bytes(render_png(cx, req))
    print(f"wrote {args.out} ({cx.pdb_id}, view {args.view}{', ' + args.ops if args.ops else ''})")
    return 0


def cmd_preview(args: argparse.Namespace) -> int:
    from ..scene.sheet import contact_sheet  # noqa: PLC0415

    cx = load_from_args(args)
    Path(args.out).write_bytes(contact_sheet(cx, size=args.size))
    print(f"wrote {args.out} (six views of {cx.pdb_id})")
    return 0


def _render_parsers(sub) -> None:
    from ..operations.transforms import VIEW_NAMES  # noqa: PLC0415

    p = sub.add_parser("render", help="render one view of a complex to PNG")
    add_complex_args(p)
    p.add_argument("--view", default="front", choices=VIEW_NAMES)
    p.add_argument(
        "--ops",
        default="",
        help="operations applied to the whole model, e.g. 'roll y 30, move x 2'",
    )
    p.add_argument(
        "--size", type=int, default=DEFAULT_IMAGE_SIZE, help="image size in pixels (square)"
    )
    p.add_argument("--out", required=True, help="output PNG file")
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("preview", help="contact sheet of the six views of a complex")
    add_complex_args(p)
    p.add_argument("--size", type=int, default=384, help="size of each view in pixels")
    p.add_argument("--out", required=True, help="output PNG file")
    p.set_defaults(func=cmd_preview)


def add_commands(sub) -> None:
    """Add ``inspect``, ``render`` and ``preview`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "inspect", help="atoms, pocket residues, ligand atoms and hydrogen bonds of one complex"
    )
    add_complex_args(p)
    p.add_argument(
        "--json", action="store_true", help="print JSON (hydrogen bonds under the key 'hbonds')"
    )
    p.set_defaults(func=cmd_inspect)
    _render_parsers(sub)

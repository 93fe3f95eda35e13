"""Legibility of the labels an H-bond answer needs, per view, under each label placement.

For every complex of a data set, its T9 pictures (the whole pocket in the six views, as the
task draws them) are rendered under each placement, and in each view the labels T9's answer
needs (each bond's residue label and ligand atom name) are counted as legible when the audit's
test passes (``audit_checks.legible_keys``: no other label and no ligand stick meets the label's
box, and at least 90% of its glyph pixels show the label colour). The T4 pictures (one
residue and the ligand, residue atom names) are measured the same way on their answer's two
atom names. Prints a markdown table per task: the
share of needed labels legible in each view, over all bonds of the set.

Run: ``python -m scripts.label_legibility [--set samples|heldout|all]
[--size 512] [--placements avoid,leader] [--save DIR]`` (``--save`` writes the T9 front view of
each complex under each placement, for looking at them).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import time
from pathlib import Path

from misi_bench.builder.checks.audit_checks import legible_keys
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.core.constants import DEFAULT_IMAGE_SIZE
from misi_bench.builder.operations.transforms import VIEW_NAMES
from misi_bench.builder.scene.raster import label_layout, ligand_mask, render_image
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import request
from misi_bench.builder.tasks.residue_ligand import residue_images

from .fixtures import fixture_root

log = logging.getLogger(__name__)

SETS = ("samples", "heldout")


def _placed(req, placement: str):
    return dataclasses.replace(req, style=dataclasses.replace(req.style, label_placement=placement))


def _legible(cx, req) -> set:
    image = render_image(cx, req)
    import numpy as np  # noqa: PLC0415

    return legible_keys(np.asarray(image), label_layout(cx, req), ligand_mask(cx, req))


def measure(refs, size: int, placements: list[str], save: Path | None = None) -> dict:
    """{task: {placement: {view: [legible, needed]}}} over the complexes ``refs``."""
    out: dict = {
        t: {p: {v: [0, 0] for v in VIEW_NAMES} for p in placements}
        for t in ("pocket_ligand", "residue_ligand")
    }
    seconds = {p: 0.0 for p in placements}
    for ref in refs:
        cx = load_complex(ref)
        ann = annotate(cx, size, "chimerax")
        if not ann.hbonds:
            continue
        needed9 = {("residue", int(cx.residue_index[b.protein_atom])) for b in ann.hbonds} | {
            ("atom", int(b.ligand_atom)) for b in ann.hbonds
        }
        for placement in placements:
            for view in VIEW_NAMES:
                req = _placed(request(ann, view), placement)
                start = time.perf_counter()
                seen = _legible(cx, req)
                seconds[placement] += time.perf_counter() - start
                cell = out["pocket_ligand"][placement][view]
                cell[0] += len(needed9 & seen)
                cell[1] += len(needed9)
                if save is not None and view == "front":
                    save.mkdir(parents=True, exist_ok=True)
                    render_image(cx, req).save(save / f"{ref.pdb_id}_{placement}.png")
            for residue in sorted({int(cx.residue_index[b.protein_atom]) for b in ann.hbonds}):
                bonds = [b for b in ann.hbonds if cx.residue_index[b.protein_atom] == residue]
                needed4 = {("atom", int(b.protein_atom)) for b in bonds} | {
                    ("atom", int(b.ligand_atom)) for b in bonds
                }
                for spec in residue_images(ann, residue):
                    req = _placed(spec.request, placement)
                    seen = _legible(cx, req)
                    cell = out["residue_ligand"][placement][spec.request.view]
                    cell[0] += len(needed4 & seen)
                    cell[1] += len(needed4)
    out["seconds"] = seconds
    return out


def table(result: dict, task: str, placements: list[str]) -> str:
    lines = [
        "| placement | " + " | ".join(VIEW_NAMES) + " | all views | labels |",
        "|---|" + "---:|" * (len(VIEW_NAMES) + 2),
    ]
    for placement in placements:
        cells = result[task][placement]
        legible = sum(c[0] for c in cells.values())
        needed = sum(c[1] for c in cells.values())
        shares = [f"{100 * c[0] / c[1]:.1f}%" if c[1] else "–" for c in cells.values()]
        total = f"{100 * legible / needed:.1f}%" if needed else "–"
        lines.append(f"| `{placement}` | " + " | ".join(shares) + f" | {total} | {needed} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=(*SETS, "all"), default="all")
    parser.add_argument("--size", type=int, default=DEFAULT_IMAGE_SIZE)
    parser.add_argument("--placements", default="avoid,leader")
    parser.add_argument("--save", type=Path, default=None)
    args = parser.parse_args(argv)
    placements = [p.strip() for p in args.placements.split(",") if p.strip()]
    for name in SETS if args.set == "all" else (args.set,):
        refs = discover("samples" if name == "samples" else str(fixture_root(name)))
        result = measure(refs, args.size, placements, args.save)
        print(f"## {name} ({len(refs)} complexes, {args.size} px)\n")
        for task in ("pocket_ligand", "residue_ligand"):
            print(f"{task}: share of the answer's labels legible, per view\n")
            print(table(result, task, placements) + "\n")
        ms = ", ".join(f"{p} {1000 * s:.0f} ms" for p, s in result["seconds"].items())
        print(f"T9 render + layout time, all views: {ms}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

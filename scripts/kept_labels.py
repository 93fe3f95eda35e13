"""Labels that stay with their atoms (issue 53 item 0): the share of a question's labels that keep
the reference picture's offset from their atom in its later pictures, per task.

For every complex of a set, each task's questions are generated (seed 0, ``paper`` profile) and
each later picture that keeps its reference's labels (``RenderRequest.reference``) is laid out
(``raster.label_layout``). A label counts when its picture and the reference both place it free
(its key among the reference's ``placement.kept_offsets``); it ``fits`` when its box at the kept
offset lies inside the frame; it is ``kept`` when it is drawn exactly there. Prints a markdown
table per task: labels in both pictures, those that fit, kept, kept / fit and kept / both, and
(same run) the share of fitting labels that the layout without a reference (RENDER_VERSION 8)
happens to draw at the kept offset.

Run: ``python -m scripts.kept_labels [--set heldout|copies|samples|all] [--seeds 1]``.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass, replace

from misi_bench.builder.core.constants import DEFAULT_IMAGE_SIZE
from misi_bench.builder.dataset.units import AnnotationCache
from misi_bench.builder.scene.raster import label_layout, reference_offsets
from misi_bench.builder.scene.requests import in_plane_shift
from misi_bench.builder.store.sources import discover
from misi_bench.builder.tasks import TASKS, generator
from misi_bench.builder.tasks.base import TaskContext

from .fixtures import fixture_root

log = logging.getLogger(__name__)

SETS = ("heldout", "copies", "samples")


@dataclass
class Tally:
    """Counts of one task: labels present in both pictures, fitting the frame, kept, and kept
    by the layout without a reference (RENDER_VERSION 8's rule, ``before``)."""

    both: int = 0
    fits: int = 0
    kept: int = 0
    before: int = 0

    def add(self, other: Tally) -> None:
        self.both += other.both
        self.fits += other.fits
        self.kept += other.kept
        self.before += other.before


def picture_tally(cx, req) -> Tally:
    """The :class:`Tally` of one later picture ``req`` against its reference."""
    out = Tally()
    found = reference_offsets(cx, req)
    if not found or not found[0]:
        return out
    offsets = found[0]
    size = int(req.camera.size)
    alone = {lb.key: (lb.x, lb.y) for lb in label_layout(cx, replace(req, reference=None))}
    for lb in label_layout(cx, req):
        if lb.key not in offsets or lb.origin is None:
            continue
        dx, dy, _ = offsets[lb.key]
        x, y = round(lb.origin[0] + dx), round(lb.origin[1] + dy)
        out.both += 1
        if x >= 0 and y >= 0 and x + lb.width <= size and y + lb.height <= size:
            out.fits += 1
            out.kept += int((lb.x, lb.y) == (x, y))
            out.before += int(alone.get(lb.key) == (x, y))
    return out


def measure(
    set_name: str, seeds: range, tasks=TASKS, size: int = DEFAULT_IMAGE_SIZE
) -> dict[str, Tally]:
    """Per task, the :class:`Tally` over every question of ``set_name`` and ``seeds``; the
    pictures that are their reference shifted in its plane (T1's image 4) under ``<task>
    (shifted)``."""
    refs = {r.pdb_id: r for r in discover(str(fixture_root(set_name)))}
    cache = AnnotationCache(refs, 10.0, size)
    ids = sorted(refs)
    out: dict[str, Tally] = {}
    for pdb_id in ids:
        ann = cache.get(pdb_id)
        partners = tuple(p for p in ids if p != pdb_id)
        for task in tasks:
            for seed in seeds:
                ctx = TaskContext.for_task(
                    task, ann, "train", seed, "paper", partners=partners, load_partner=cache.get
                )
                for inst in generator(task)(ctx):
                    for img in inst.images:
                        if img.request.reference is not None:
                            cx = cache.get(img.pdb_id).complex
                            name = f"{task} (shifted)" if in_plane_shift(img.request) else task
                            out.setdefault(name, Tally()).add(picture_tally(cx, img.request))
    return out


def table(tallies: dict[str, Tally]) -> str:
    """A markdown table of :func:`measure`'s tallies."""
    lines = [
        "| task | labels in both | fit the frame | kept | kept / fit | kept / both "
        "| kept / fit, version 8 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for task, t in tallies.items():
        if not t.both:
            lines.append(f"| {task} | 0 | 0 | 0 | - | - | - |")
            continue
        lines.append(
            f"| {task} | {t.both} | {t.fits} | {t.kept} | "
            f"{100 * t.kept / max(t.fits, 1):.1f}% | {100 * t.kept / t.both:.1f}% | "
            f"{100 * t.before / max(t.fits, 1):.1f}% |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    parser.add_argument("--set", choices=(*SETS, "all"), default="heldout")
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for set_name in SETS if args.set == "all" else (args.set,):
        log.info("## %s\n\n%s\n", set_name, table(measure(set_name, range(args.seeds))))


if __name__ == "__main__":
    main()

"""Benchmark of the pocket pictures: legibility, bytes and render time per image size, and the
build's cost against an older revision, side by side.

    python -m scripts.bench_pictures [--sizes 512,768,1024] [--set samples|heldout|all] [--ocr]
    python -m scripts.bench_pictures --baseline REV [--limit 12] [--rounds 3] [--workers 2]
        [--source samples|unseen]
    python -m scripts.bench_pictures --baseline REV --render-only [--limit 8] [--rounds 20]

Sizes (this checkout): for every complex of the set with H-bonds, the six views T8 and T9 show
(``tasks.base.six_views``) at each size: PNG bytes per image, ``render_png`` ms per image (best
of two passes, after a warm-up), the share of answer-bearing labels (each bond's residue label
and ligand atom name) legible by the audit's rule (``audit_checks.legible_keys`` with the
ligand mask) in at least one view, and with ``--ocr`` the share of answer-bearing residue
labels tesseract reads in at least one view (``scripts.ocr_labels``).

``--baseline REV`` (a git revision, e.g. ``b193084``): REV's whole tree is extracted to a
temporary folder and run beside this checkout, alternately, on the same inputs: (1) a whole
build (``misi-bench build --source samples --limit N --workers W``, audit included) in a child
process, CPU seconds per complex from the child's resource usage (its worker processes
included); (2) ``render_png`` of the six views of each of the first N samples' pockets, ms per
image (best round). Prints both checkouts' figures and the ratios new / old. ``--source unseen``
builds complexes the generator was never tuned on instead of the samples (``unseen_root``: the
held-out complexes and other crystal copies of ``tests/data``).

``--render-only`` (with ``--baseline``): no builds; one long-lived child process per checkout
holds the six views of each of the first N samples' pockets (rendered twice to warm the
caches); in each round both render every complex's six views, complex by complex, back to back
(which of the two goes first alternates), so that both see the same load. Per checkout: the
best and the median round (``render_png`` CPU ms per image); the ratios new / old of the best
rounds, of the medians, the median of the rounds' ratios and that of all rounds together, with
the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = ("samples", "heldout")

_RENDER_SNIPPET = """
import json, sys, time
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.scene.cache import render_png
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import six_views
limit, rounds = int(sys.argv[1]), int(sys.argv[2])
jobs = []
for ref in sample_refs()[:limit]:
    cx = load_complex(ref)
    jobs += [(cx, s.request) for s in six_views(annotate(cx))]
for cx, req in jobs:
    render_png(cx, req)
best = None
for _ in range(rounds):
    start = time.process_time()
    for cx, req in jobs:
        render_png(cx, req)
    took = (time.process_time() - start) / len(jobs)
    best = took if best is None else min(best, took)
print(json.dumps({"ms_per_image": 1000 * best, "images": len(jobs)}))
"""


_SERVE_SNIPPET = """
import json, sys, time
from misi_bench.builder.chemistry.samples import sample_refs
from misi_bench.builder.chemistry.structure import load_complex
from misi_bench.builder.scene.cache import render_png
from misi_bench.builder.tasks.annotation import annotate
from misi_bench.builder.tasks.base import six_views
groups = []
for ref in sample_refs()[: int(sys.argv[1])]:
    cx = load_complex(ref)
    groups.append([(cx, s.request) for s in six_views(annotate(cx))])
for _ in range(2):
    for jobs in groups:
        for cx, req in jobs:
            render_png(cx, req)
print(json.dumps({"groups": len(groups), "images": sum(map(len, groups))}), flush=True)
for line in sys.stdin:
    jobs = groups[int(line)]
    start = time.process_time()
    for cx, req in jobs:
        render_png(cx, req)
    print(json.dumps({"seconds": time.process_time() - start}), flush=True)
"""


def size_figures(refs, size: int, ocr: bool) -> dict:
    """Bytes, render ms, legible share (and OCR share) of the six views at ``size`` px."""
    import numpy as np  # noqa: PLC0415
    from misi_bench.builder.checks.audit_checks import decode, legible_keys  # noqa: PLC0415
    from misi_bench.builder.chemistry.structure import load_complex  # noqa: PLC0415
    from misi_bench.builder.scene.cache import render_png  # noqa: PLC0415
    from misi_bench.builder.scene.raster import label_layout, ligand_mask  # noqa: PLC0415
    from misi_bench.builder.tasks import pocket_ligand  # noqa: PLC0415
    from misi_bench.builder.tasks.annotation import annotate  # noqa: PLC0415
    from misi_bench.builder.tasks.base import six_views  # noqa: PLC0415

    from .ocr_labels import answer_residues, found_labels, ocr_words  # noqa: PLC0415

    out = {"images": 0, "bytes": 0, "seconds": 0.0, "needed": 0, "legible": 0}
    out.update(ocr_needed=0, ocr_found=0)
    for ref in refs:
        cx = load_complex(ref)
        ann = annotate(cx, size)
        if not ann.hbonds:
            continue
        specs = six_views(ann)
        for spec in specs:
            render_png(cx, spec.request)  # warm caches (sprites, glyphs)
        best = None
        for _ in range(2):
            start = time.perf_counter()
            pngs = [render_png(cx, spec.request) for spec in specs]
            took = time.perf_counter() - start
            best = took if best is None else min(best, took)
        out["seconds"] += best
        out["images"] += len(pngs)
        out["bytes"] += sum(len(p) for p in pngs)
        needed = pocket_ligand.needed_labels(None, None, ann)
        seen: set = set()
        for spec, png in zip(specs, pngs):
            req = spec.request
            seen |= legible_keys(
                np.asarray(decode(png)), label_layout(cx, req), ligand_mask(cx, req)
            )
        out["needed"] += len(needed)
        out["legible"] += len(needed & seen)
        if ocr:
            want, got = answer_residues(cx, ann.hbonds), set()
            for png in pngs:
                got |= found_labels(ocr_words(png), want)
            out["ocr_needed"] += len(want)
            out["ocr_found"] += len(got)
    return out


def extract(rev: str, into: Path) -> Path:
    """The whole tree of git revision ``rev`` under ``into`` (to put on PYTHONPATH)."""
    archive = into / "rev.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _child_env(tree: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    return env


def unseen_root(into: Path, count: int = 12) -> Path:
    """A PDBbind-style root of ``count`` complexes never used to tune the generator: the eight
    held-out complexes, then the other crystal copies (``tests/data``); a copy whose PDB id
    is already taken gets its folder and file names' last character replaced by ``z`` (the id
    only names the folder: splits follow it, nothing is looked up by it)."""
    from .fixtures import fixture_root  # noqa: PLC0415

    root = into / "unseen"
    root.mkdir()
    folders = [d for d in sorted(fixture_root("heldout").iterdir()) if d.is_dir()]
    folders = [d for d in folders if d.name != "raw"]
    folders += [d for d in sorted(fixture_root("copies").iterdir()) if d.is_dir()]
    for folder in folders[:count]:
        name = folder.name
        if (root / name).exists():
            name = name[:-1] + "z"
        (root / name).mkdir()
        for file in folder.iterdir():
            (root / name / file.name.replace(folder.name, name)).write_bytes(file.read_bytes())
    return root


def build_cpu(tree: Path, out: Path, limit: int, workers: int, source: str = "samples") -> float:
    """CPU seconds (user + system, the child and its workers) of one whole build."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "misi_bench", "build", "--source", source, "--limit", str(limit)]
        + ["--workers", str(workers), "--out", str(out), "--quiet"],
        check=True,
        env=_child_env(tree),
        cwd=tree,
        stdout=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def render_ms(tree: Path, limit: int, rounds: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _RENDER_SNIPPET, str(limit), str(rounds)],
        check=True,
        env=_child_env(tree),
        cwd=tree,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def versus(rev: str, limit: int, rounds: int, workers: int, source: str = "samples") -> None:
    with tempfile.TemporaryDirectory(prefix="bench-pictures-") as tmp:
        tmp = Path(tmp)
        old = extract(rev, tmp)
        root = str(unseen_root(tmp, limit)) if source == "unseen" else "samples"
        trees = {"old": old, "new": ROOT}
        cpu = {"old": [], "new": []}
        render = {"old": [], "new": []}
        for k in range(rounds):
            for name in ("old", "new") if k % 2 == 0 else ("new", "old"):
                out = tmp / f"{name}-{k}"
                cpu[name].append(build_cpu(trees[name], out, limit, workers, root))
                render[name].append(render_ms(trees[name], limit, 3)["ms_per_image"])
        for name in ("old", "new"):
            print(
                f"{name} ({rev if name == 'old' else 'this checkout'}): build "
                f"{min(cpu[name]) / limit:.2f} CPU-s/complex (best of {rounds}; all: "
                + ", ".join(f"{c / limit:.2f}" for c in cpu[name])
                + f"), render_png {min(render[name]):.2f} ms/image (best of {rounds}: "
                + ", ".join(f"{r:.2f}" for r in render[name])
                + ")"
            )
        print(
            f"new / old: build CPU {min(cpu['new']) / min(cpu['old']):.3f}, "
            f"render_png {min(render['new']) / min(render['old']):.3f} "
            f"(builds: {limit} {'held-out' if source == 'unseen' else 'sample'} complexes, "
            f"{workers} workers; render_png: six views of {limit} samples)"
        )


def _serve(tree: Path, limit: int) -> tuple[subprocess.Popen, dict]:
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVE_SNIPPET, str(limit)],
        env=_child_env(tree),
        cwd=tree,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return child, json.loads(child.stdout.readline())  # loaded and warm


def _seconds(child: subprocess.Popen, group: int) -> float:
    child.stdin.write(f"{group}\n")
    child.stdin.flush()
    return json.loads(child.stdout.readline())["seconds"]


def render_versus(rev: str, limit: int, rounds: int) -> dict:
    """Alternating in-process render rounds of REV and this checkout (``--render-only``): in
    each round every complex's six views are rendered by both checkouts back to back, the
    first of the two alternating, so that both see the same load."""
    with tempfile.TemporaryDirectory(prefix="bench-pictures-") as tmp:
        old = extract(rev, Path(tmp))
        load = [os.getloadavg()[0]]
        (c_old, info), (c_new, _) = _serve(old, limit), _serve(ROOT, limit)
        children = {"old": c_old, "new": c_new}
        ms: dict[str, list[float]] = {"old": [], "new": []}
        try:
            for k in range(rounds):
                took = {"old": 0.0, "new": 0.0}
                for g in range(info["groups"]):
                    for name in ("old", "new") if (k + g) % 2 == 0 else ("new", "old"):
                        took[name] += _seconds(children[name], g)
                for name in ms:
                    ms[name].append(1000 * took[name] / info["images"])
        finally:
            for child in children.values():
                child.stdin.close()
                child.wait()
        load.append(os.getloadavg()[0])
    ratios = sorted(n / o for n, o in zip(ms["new"], ms["old"]))
    out = {"rounds": rounds, "images": info["images"], "load": load}
    out["ratio_median"] = ratios[len(ratios) // 2]
    out["ratio_total"] = sum(ms["new"]) / sum(ms["old"])
    for name in ("old", "new"):
        got = sorted(ms[name])
        out[name] = {"best": got[0], "median": got[len(got) // 2]}
    out["ratio_best"] = out["new"]["best"] / out["old"]["best"]
    out["ratio_of_medians"] = out["new"]["median"] / out["old"]["median"]
    return out


def _print_render_versus(rev: str, limit: int, f: dict) -> None:
    for name in ("old", "new"):
        print(
            f"{name} ({rev if name == 'old' else 'this checkout'}): render_png "
            f"{f[name]['best']:.2f} ms/image best, {f[name]['median']:.2f} median "
            f"({f['rounds']} rounds, six views of {limit} samples)"
        )
    print(
        f"new / old: best {f['ratio_best']:.3f}, medians {f['ratio_of_medians']:.3f}, "
        f"median of round ratios {f['ratio_median']:.3f}, all rounds {f['ratio_total']:.3f} "
        f"({f['images']} images; load average {f['load'][0]:.2f} before, "
        f"{f['load'][1]:.2f} after)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--sizes", default="512,768,1024")
    parser.add_argument("--set", choices=(*SETS, "all"), default="samples")
    parser.add_argument("--ocr", action="store_true")
    parser.add_argument("--baseline", default=None)
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument(
        "--source",
        choices=("samples", "unseen"),
        default="samples",
        help="the builds' complexes: the embedded samples, or (unseen) the held-out complexes "
        "and other crystal copies of tests/data, never used to tune the generator",
    )
    args = parser.parse_args(argv)
    if args.baseline and args.render_only:
        _print_render_versus(
            args.baseline, args.limit, render_versus(args.baseline, args.limit, args.rounds)
        )
        return 0
    if args.baseline:
        versus(args.baseline, args.limit, args.rounds, args.workers, args.source)
        return 0
    from misi_bench.builder.store.sources import discover  # noqa: PLC0415

    from .fixtures import fixture_root  # noqa: PLC0415

    print(
        "| set | size | images | KB/image | render_png ms/image | answer labels legible "
        "(some view) | OCR residue labels (some view) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in SETS if args.set == "all" else (args.set,):
        refs = discover("samples" if name == "samples" else str(fixture_root(name)))
        for size in (int(s) for s in args.sizes.split(",")):
            f = size_figures(refs, size, args.ocr)
            ocr = (
                f"{f['ocr_found']}/{f['ocr_needed']} ({100 * f['ocr_found'] / f['ocr_needed']:.1f}%)"
                if args.ocr and f["ocr_needed"]
                else "–"
            )
            print(
                f"| {name} | {size} | {f['images']} | {f['bytes'] / f['images'] / 1024:.1f} | "
                f"{1000 * f['seconds'] / f['images']:.1f} | {f['legible']}/{f['needed']} "
                f"({100 * f['legible'] / f['needed']:.1f}%) | {ocr} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

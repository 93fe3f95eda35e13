"""Build benchmark: time and peak memory per complex on the embedded samples, scaling over
5 / 10 / all complexes, and the projected time of the paper-sized build.

Run: ``python -m scripts.bench_build [--workers 1]``. Each size is built in a
fresh folder in a child process, which reports its own peak resident memory (with one worker
that is generation and merge together; with more, the workers' own peaks are not included).
Projection: the paper's 3,993 complexes at the measured seconds per complex, divided over 2 and
16 cores (complex units are independent, so the generation scales with cores; the merge is
I/O-bound and measured separately).

``--shard-cpu N [--baseline REV]``: instead, the CPU seconds per complex of the shards stage's
unit function (``dataset.units.run_unit``: read, annotate, generate, render, encode, write) on
the first N samples, in this process, one complex at a time; with ``--baseline REV`` (a git
revision, e.g. ``main``) REV's unit function runs alternately with ours on the same complexes
(``scripts/baseline.py``), after one untimed pass of each (the sprite and glyph caches are warm
in a long build), and the two units' Parquet files are compared byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAPER_COMPLEXES = 3993
PAPER_QUESTIONS = 163_514
PAPER_IMAGES = 587_975

_CHILD = """
import json, sys, time
from misi_bench.builder.dataset.build import build_dataset
t = time.perf_counter()
m = build_dataset(source="samples", out=sys.argv[1], limit=int(sys.argv[2]), workers=int(sys.argv[3]),
                  progress=False, validate=False, audit=sys.argv[4] == "1")
dt = time.perf_counter() - t
q = sum(m["totals"]["questions"][s] for s in ("train", "test"))
i = sum(m["totals"]["images"].values())
import resource
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
n = m["complexes"]["train"] + m["complexes"]["test"]
print(json.dumps({"peak_mb": peak_mb, "seconds": dt, "questions": q, "images": i, "complexes": n}))
"""


def run(limit: int, workers: int, audit: bool = True) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, f"{tmp}/out", str(limit), str(workers), str(int(audit))],
            check=True,
            capture_output=True,
            text=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--sizes", default="5,10,19")
    parser.add_argument(
        "--no-audit",
        action="store_true",
        help="leave out the build's sampled audit (a fixed cost per build, not per complex)",
    )
    parser.add_argument("--shard-cpu", type=int, default=0, metavar="N")
    parser.add_argument("--baseline", help="with --shard-cpu: git revision to compare with")
    parser.add_argument("--rounds", type=int, default=2, help="with --shard-cpu: timed passes")
    args = parser.parse_args(argv)
    if args.shard_cpu:
        return shard_cpu(args.shard_cpu, args.baseline, args.rounds)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        r = run(n, args.workers, audit=not args.no_audit)
        rows.append(r)
        print(
            f"{r['complexes']:3d} complexes: {r['seconds']:7.1f} s, {r['seconds'] / r['complexes']:.2f} s/complex, "
            f"{r['questions']} questions, {r['images']} images ({r['images'] / r['seconds']:.1f} images/s), "
            f"peak RSS of the build process {r['peak_mb']:.0f} MB"
        )
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        ratio = (b["seconds"] / b["complexes"]) / (a["seconds"] / a["complexes"])
        print(
            f"scaling: time per complex at {b['complexes']} vs {a['complexes']} complexes = {ratio:.2f}x "
            f"(1.0 = linear)"
        )
    last = rows[-1]
    per_image = last["seconds"] * args.workers / last["images"]
    for cores in (2, 16):
        hours = PAPER_IMAGES * per_image / cores / 3600
        print(
            f"projected paper-size build ({PAPER_COMPLEXES} complexes, ~{PAPER_QUESTIONS} questions, "
            f"{PAPER_IMAGES} images) on {cores} cores: {hours:.2f} h (at {per_image * 1000:.1f} ms per image per core)"
        )
    return 0


#: The baseline child's handler (``scripts/baseline.py``): one unit, its CPU and file digest.
_CHILD = """
import hashlib
from pathlib import Path
from misi_baseline.dataset.build import plan
from misi_baseline.dataset.config import BuildConfig
from misi_baseline.dataset.units import run_unit
CFG = BuildConfig(source="samples")
REFS, SPLITS = plan(CFG)

def unit(pdb_id, work):
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    start = time.process_time()
    run_unit((pdb_id, REFS, SPLITS, CFG, work))
    cpu = time.process_time() - start
    data = (work / f"{pdb_id}.parquet").read_bytes()
    return {"cpu": cpu, "sha256": hashlib.sha256(data).hexdigest()}
"""


def _our_unit():
    """``unit(pdb_id, work)``: this code's unit function on the samples (default settings)."""
    from misi_bench.builder.dataset.build import plan
    from misi_bench.builder.dataset.config import BuildConfig
    from misi_bench.builder.dataset.units import run_unit

    cfg = BuildConfig(source="samples")
    refs, splits = plan(cfg)

    def unit(pdb_id: str, work: str) -> dict:
        work = Path(work)
        work.mkdir(parents=True, exist_ok=True)
        start = time.process_time()
        run_unit((pdb_id, refs, splits, cfg, work))
        cpu = time.process_time() - start
        data = (work / f"{pdb_id}.parquet").read_bytes()
        return {"cpu": cpu, "sha256": hashlib.sha256(data).hexdigest()}

    return unit, sorted(refs)


def shard_cpu(n: int, rev: str | None, rounds: int) -> int:
    """Print the shards stage's CPU seconds per complex (ours, and REV's alternately)."""
    ours, ids = _our_unit()
    ids = ids[:n]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"ours": ours}
        base = None
        if rev:
            from .baseline import Baseline

            base = Baseline(rev, Path(tmp), _CHILD)
            sides = {rev: lambda pdb_id, work: base.ask("unit", pdb_id=pdb_id, work=work)}
            sides["ours"] = ours
        cpu = {name: 0.0 for name in sides}
        same = True
        for k in range(rounds + 1):  # pass 0 warms the caches, untimed
            for pdb_id in ids:
                found = [run(pdb_id, f"{tmp}/{name}-{k}") for name, run in sides.items()]
                if k:
                    for name, got in zip(sides, found):
                        cpu[name] += got["cpu"]
                same &= len({got["sha256"] for got in found}) == 1
        if base is not None:
            base.close()
    for name, seconds in cpu.items():
        print(f"shards stage, {name}: {seconds / (rounds * len(ids)):.3f} CPU-s per complex")
    if rev:
        ratio = cpu[rev] / cpu["ours"]
        print(
            f"{rev} / ours: {ratio:.2f}x over {len(ids)} complexes x {rounds} passes; "
            f"unit Parquet files byte-identical: {same}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

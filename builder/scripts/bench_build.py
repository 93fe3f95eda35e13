"""Build benchmark: time and peak memory per complex on the embedded samples, scaling over
5 / 10 / all complexes, and the projected time of the paper-sized build.

Run: ``python -m misi_bench.builder.scripts.bench_build [--workers 1]``. Each size is built in a
fresh folder in a child process, which reports its own peak resident memory (with one worker
that is generation and merge together; with more, the workers' own peaks are not included).
Projection: the paper's 3,993 complexes at the measured seconds per complex, divided over 2 and
16 cores (complex units are independent, so the generation scales with cores; the merge is
I/O-bound and measured separately).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--sizes", default="5,10,19")
    parser.add_argument(
        "--no-audit",
        action="store_true",
        help="leave out the build's sampled audit (a fixed cost per build, not per complex)",
    )
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    raise SystemExit(main())

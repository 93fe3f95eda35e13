"""Figures of the dataset audit and the pixel-only solver on a build of the samples.

    python -m misi_bench.builder.scripts.bench_audit [--folder DIR] [--split test] [--workers 2]

Without ``--folder`` it first builds the 19 embedded samples into a temporary folder. Prints the
wall and CPU time of ``misi-bench audit`` on the split (docs/audit.md goal: under two minutes
for the test split), the per-task shares (reproduced, unique with a visible margin, answers legible) and the
pixel solver's T1/T3 scores over train and test.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ..dataset import pixel_solver
from ..dataset.audit import audit_dataset
from ..dataset.build import build_dataset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", help="a built dataset folder (default: build the samples first)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder) if args.folder else Path(tmp) / "samples"
        if not args.folder:
            build_dataset(source="samples", out=folder, workers=args.workers, progress=False, audit=False)
        wall, cpu = time.perf_counter(), time.process_time()
        report = audit_dataset(folder, split=args.split)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(report.format_text())
        print(f"audit of the {args.split} split: {wall:.1f} s wall, {cpu:.1f} s CPU")
        for task in pixel_solver.TASKS:
            values = pixel_solver.scores(folder, task)
            exact = float(np.mean([v == 1.0 for v in values])) if values else float("nan")
            print(f"pixel solver {task}: score {np.mean(values):.3f}, exact {exact:.3f} over {len(values)} questions")
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

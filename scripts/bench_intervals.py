"""Benchmark of the one interval method (``scoring.bootstrap``) at the paper's size: 163,514
questions over 4,000 complexes, every task, scores drawn at random. Prints the time of each step
(median of a few runs) and its ratio to aggregating the same questions once (``aggregate``, what
every report already does), so the cost of the intervals stays visible.

Usage: ``python -m scripts.bench_intervals [--questions N] [--complexes C] [--runs R]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.scoring import aggregate, report_intervals
from misi_bench.builder.scoring.bootstrap import (
    RESAMPLES,
    bootstrap_intervals,
    items_from_per_item,
    paired,
    paired_test,
)


def per_item(questions: int, complexes: int, seed: int) -> list[dict]:
    """Per-question entries as ``score_records`` gives them: task, complex, score, T4 polarity
    (one question structure for every seed; ``seed`` draws the scores)."""
    rng = np.random.default_rng(0)
    tasks = rng.integers(0, len(TASK_NAMES), questions)
    units = rng.integers(0, complexes, questions)
    scores = np.random.default_rng(seed).random(questions).round(3)
    out = []
    for k in range(questions):
        task = TASK_NAMES[int(tasks[k])]
        metrics = {"score": float(scores[k]), "exact": float(scores[k] > 0.5)}
        if task == "residue_ligand":
            metrics["polarity"] = float(k % 2)
        out.append(
            {
                "id": f"q{k:06d}",
                "task": task,
                "complex": f"c{int(units[k]):04d}",
                "metrics": metrics,
            }
        )
    return out


def _time(fn, runs: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--questions", type=int, default=163_514)
    parser.add_argument("--complexes", type=int, default=4_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    a = per_item(args.questions, args.complexes, 0)
    b = per_item(args.questions, args.complexes, 1)
    base, _ = _time(lambda: aggregate((i["task"], i["metrics"]) for i in a), args.runs)
    build, items_a = _time(lambda: items_from_per_item(a), args.runs)
    items_b = items_from_per_item(b)
    boot, found = _time(lambda: bootstrap_intervals(items_a), args.runs)
    block, _ = _time(lambda: report_intervals(a), args.runs)
    diff = paired(items_a, items_b)
    test, p = _time(lambda: paired_test(diff), args.runs)
    print(
        f"{args.questions:,} questions, {len(items_a.units):,} complexes, {RESAMPLES} resamples "
        f"(median of {args.runs} runs)"
    )
    print(f"aggregate (the report without intervals): {base:.3f} s")
    rows = [
        ("per-question arrays (items_from_per_item)", build),
        ("bootstrap of every figure (bootstrap_intervals)", boot),
        ("the report's intervals block (both above)", block),
        ("paired sign-flip test of a comparison", test),
    ]
    for name, seconds in rows:
        print(f"{name}: {seconds:.3f} s ({seconds / base:.2f} x aggregate)")
    pa = found["paper_average"]
    print(
        f"paper_average {100 * pa.value:.2f} [{100 * pa.low:.2f}, {100 * pa.high:.2f}], "
        f"se {100 * pa.se:.3f} points; p of two random results: {p['paper_average']:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark and check of the breakdown by factor (``scoring.factor_table``).

1. Cost at the paper's size: 163,514 questions over 4,000 complexes, every task, every factor of
   its data file with its bins drawn at random; prints the time of one result's breakdown
   (``bin_table``: every bin's interval) and of a paired comparison (``compare_by_factor``),
   and their ratio to the result's whole-table intervals (``report_intervals``) in the same run.
2. With ``--build DIR`` (a build folder): how often a random stand-in's bin interval holds the
   bin's chance level, over ``--seeds`` stand-ins, by the number of complexes in the bin.

Usage: ``python -m scripts.bench_factors [--questions N] [--complexes C] [--build DIR --seeds S]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import zlib
from pathlib import Path

import numpy as np
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.scoring import (
    baseline_prediction,
    report_intervals,
    score_records,
)
from misi_bench.builder.scoring import factor_table as ft
from misi_bench.builder.scoring.factors import factors_of

from .bench_intervals import per_item

log = logging.getLogger("bench_factors")


def synthetic_bins(items: list[dict], seed: int = 0) -> dict[str, dict[str, str]]:
    """Every question's bin of each of its task's factors, drawn at random."""
    rng = np.random.default_rng(seed)
    out = {}
    for item in items:
        out[item["id"]] = {
            f.key: f.bins[int(rng.integers(0, len(f.bins)))] for f in factors_of(item["task"])
        }
    return out


def cost(questions: int, complexes: int) -> None:
    items = per_item(questions, complexes, 1)
    other = per_item(questions, complexes, 2)
    bins = synthetic_bins(items)
    t0 = time.perf_counter()
    report_intervals(items)
    whole = time.perf_counter() - t0
    t0 = time.perf_counter()
    cells = ft.bin_table(items, bins)
    table = time.perf_counter() - t0
    t0 = time.perf_counter()
    ft.compare_by_factor(items, other, bins)
    paired = time.perf_counter() - t0
    print(f"{questions} questions, {complexes} complexes, {len(cells)} bins")
    print(f"whole-table intervals: {whole:.2f} s")
    print(f"by factor (bin_table): {table:.2f} s ({table / whole:.1f}x)")
    print(f"two results by factor (compare_by_factor): {paired:.2f} s ({paired / whole:.1f}x)")


def _rows(build: Path) -> list[dict]:
    from misi_bench.builder.store.parquet import iter_config_rows

    cols = ["id", "task", "answer", "metadata", "options"]
    return [
        r
        for task in TASK_NAMES
        for split in ("test", "train")
        for r in iter_config_rows(build, task, split, cols)
    ]


def coverage(build: Path, seeds: int) -> None:
    rows = _rows(build)
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    bins = ft.row_bins(rows, ft.manifest_facts(manifest))
    chance = ft.chance_by_bin(rows, bins, draws=200)
    by_size: dict[str, list[bool]] = {"<5": [], "5-9": [], ">=10": []}
    for seed in range(seeds):
        preds = {
            r["id"]: baseline_prediction(
                "random", r["task"], r, np.random.default_rng([seed, zlib.crc32(r["id"].encode())])
            )
            for r in rows
        }
        for c in ft.bin_table(score_records(rows, preds)["per_item"], bins):
            level = chance[(c.task, c.factor, c.bin)]
            if min(level, 1 - level) * c.n < 5:
                continue
            size = "<5" if c.complexes < 5 else ("5-9" if c.complexes < 10 else ">=10")
            by_size[size].append(c.low - 1e-9 <= level <= c.high + 1e-9)
    print(f"{build}: {len(rows)} questions, random stand-ins x{seeds}")
    for size, hits in by_size.items():
        if hits:
            print(
                f"bins of {size} complexes: {sum(hits)}/{len(hits)} intervals hold chance "
                f"({100 * sum(hits) / len(hits):.0f}%)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--questions", type=int, default=163_514)
    parser.add_argument("--complexes", type=int, default=4_000)
    parser.add_argument("--build", type=Path)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    cost(args.questions, args.complexes)
    if args.build:
        coverage(args.build, args.seeds)


if __name__ == "__main__":
    main()

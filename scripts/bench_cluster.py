"""Cluster sizing benchmark: the per-complex cost of a shard and of the merge, and what it means
for a Slurm array over the paper's 3,993 complexes.

Run: ``python -m scripts.bench_cluster [--limit 19] [--source samples]``. Builds the
complexes with one worker as a shard would (``--no-merge``), reads each complex's own generation
time from its completion marker (process start-up excluded), then times the merge with its
validation (the merge job). Prints CPU seconds per complex (the sizing figure: on a dedicated core
wall time is about the same) and wall seconds, the peak resident memory of the
process (one worker), and for a few array sizes the wall time of one shard and of the merge.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import tempfile
import time
from pathlib import Path

PAPER_COMPLEXES = 3993


def measure(source: str, limit: int, seed: int = 0) -> dict:
    from misi_bench.builder.dataset.build import build_dataset  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        start, cpu = time.perf_counter(), _cpu()
        build_dataset(
            source=source, out=out, limit=limit, seed=seed, workers=1, merge=False, progress=False
        )
        generation, generation_cpu = time.perf_counter() - start, _cpu() - cpu
        statuses = [json.loads(p.read_text()) for p in out.glob(".work/*/complexes/*.status.json")]
        start, cpu = time.perf_counter(), _cpu()
        manifest = build_dataset(
            source=source, out=out, limit=limit, seed=seed, merge_only=True, progress=False
        )
        merge, merge_cpu = time.perf_counter() - start, _cpu() - cpu
    seconds = [s["seconds"] for s in statuses if s["ok"]]
    return {
        "complexes": len(seconds),
        "per_complex": seconds,
        "generation_s": generation,
        "merge_s": merge,
        "generation_cpu_s": generation_cpu,
        "merge_cpu_s": merge_cpu,
        "images": sum(manifest["totals"]["images"].values()),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="samples")
    parser.add_argument("--limit", type=int, default=19)
    parser.add_argument("--cpus", type=int, default=4, help="CPUs per array task in the projection")
    args = parser.parse_args(argv)
    r = measure(args.source, args.limit)
    n = r["complexes"]
    cpu, merge_cpu = r["generation_cpu_s"] / n, r["merge_cpu_s"] / n
    print(
        f"{n} complexes, one worker: {cpu:.2f} CPU-s per complex; wall {statistics.mean(r['per_complex']):.2f} s "
        f"per complex (max {max(r['per_complex']):.2f}; above the CPU time when the machine is shared), "
        f"{r['images'] / n:.0f} images per complex; peak RSS {r['peak_mb']:.0f} MB"
    )
    print(
        f"merge + validation: {merge_cpu:.2f} CPU-s per complex (wall {r['merge_s']:.1f} s in all)"
    )
    print(
        f"paper-size build, {PAPER_COMPLEXES} complexes = {PAPER_COMPLEXES * cpu / 3600:.1f} CPU-hours of shards; "
        f"array tasks with --cpus {args.cpus} (dedicated cores):"
    )
    for shards in (4, 8, 16, 32, 64):
        per_shard = math.ceil(PAPER_COMPLEXES / shards)
        hours = per_shard * cpu / args.cpus / 3600
        print(
            f"  --array {shards:3d}: {per_shard:4d} complexes per shard, ~{hours:5.2f} h per shard"
        )
    print(
        f"  merge job (one CPU, validation included): ~{PAPER_COMPLEXES * merge_cpu / 3600:.2f} h"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

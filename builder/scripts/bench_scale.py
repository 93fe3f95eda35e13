"""Stage-by-stage cost of a build and its projection to the paper's size (3,993 complexes).

    python -m misi_bench.builder.scripts.bench_scale [--source samples] [--limit N] [--workers 2]
        [--out DIR] [--upload-mb-s 100]

Builds ``--source`` (default: the 19 embedded samples) stage by stage, each stage timed alone
(wall and CPU seconds of this process and its worker processes):

1. **shards**: generation of every complex (``build --no-merge``) with ``--workers``;
2. **merge**: the configs' shards, card and manifest (``--merge-only``, no validation or audit);
3. **validation** of every row, with 1 and with ``--workers`` processes;
4. **audit** of the whole test split (reproduction, uniqueness, legibility), 1 and ``--workers``;
5. **push**: the published bytes, at an assumed upload rate (``--upload-mb-s``; not measured).

Prints CPU-s per complex of each stage, the measured speed-up from 1 to ``--workers`` processes,
and the projected wall time of the paper's 3,993 complexes on one 16-core node and on an 8-node
Slurm array (16 cores each; the merge job, which validates and audits, runs on one node with 16
CPUs). Projections divide the measured CPU seconds by the cores, times the parallel efficiency
implied by the CPU overhead of ``--workers`` processes (CPU of 1 / CPU of N; assumed to hold at
16 free cores); the merge writes one shard file per job (16 processes, bounded below by the
largest job, one shard of ``max_shard_bytes``) plus the card's pixel-solver baseline (a fixed
cost: at most ``MAX_QUESTIONS`` per task, spread over the merge's processes); the audit covers
the test complexes only (this build's test share).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from ..dataset import pixel_solver
from ..dataset.audit import audit_dataset
from ..dataset.build import build_dataset
from ..dataset.config import BuildConfig
from ..dataset.manifest import read_manifest
from ..dataset.validate import validate_dataset

PAPER_COMPLEXES = 3993
NODE_CORES = 16
ARRAY_NODES = 8


def _cpu() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, _cpu() - cpu


def _fmt(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="samples")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="build folder (default: a temporary one)")
    parser.add_argument(
        "--upload-mb-s", type=float, default=100.0, help="assumed upload rate for push (MB/s)"
    )
    args = parser.parse_args(argv)
    w = args.workers
    print(
        f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; workers {w}"
    )
    tmp = tempfile.mkdtemp()
    out = Path(args.out) if args.out else Path(tmp) / "build"
    try:
        common = dict(source=args.source, out=out, limit=args.limit, progress=False)
        _, gen_wall, gen_cpu = _timed(build_dataset, merge=False, workers=w, **common)
        _, merge_wall, merge_cpu = _timed(
            build_dataset, merge_only=True, validate=False, audit=False, workers=w, **common
        )
        manifest = read_manifest(out)
        # the card's pixel-solver baseline (part of the merge) scores at most MAX_QUESTIONS per
        # task: a fixed cost at the paper's size, timed alone here
        _, _, card_cpu = _timed(pixel_solver.baseline_row, out, list(pixel_solver.TASKS))
        solved = sum(
            sum(manifest["counts"][t].get(s, 0) for s in ("train", "test"))
            for t in pixel_solver.TASKS
        )
        n = manifest["complexes"]["train"] + manifest["complexes"]["test"]
        n_test = manifest["complexes"]["test"]
        stages = {}
        for name, fn in (
            ("validation", lambda k: validate_dataset(out, workers=k)),
            ("audit", lambda k: audit_dataset(out, split="test", workers=k)),
        ):
            _, wall1, cpu1 = _timed(fn, 1)
            _, wallw, cpuw = _timed(fn, w)
            stages[name] = (wall1, cpu1, wallw, cpuw)
        published = sum(v["bytes"] for v in manifest["shards"].values())
        questions = (
            manifest["totals"]["questions"]["train"] + manifest["totals"]["questions"]["test"]
        )
        print(
            f"build of {n} complexes ({n_test} test), {questions} questions, {published / 1e6:.1f} MB published"
        )
        print(f"| stage | wall | CPU | CPU-s per complex | speed-up 1 -> {w} workers |")
        print("|---|---:|---:|---:|---:|")
        print(
            f"| shards ({w} workers) | {gen_wall:.1f} s | {gen_cpu:.1f} s | {gen_cpu / n:.2f} | - |"
        )
        print(
            f"| merge ({w} workers; of which the card's pixel-solver baseline, {solved} questions) | "
            f"{merge_wall:.1f} s | {merge_cpu:.1f} s ({card_cpu:.1f} s) | "
            f"{(merge_cpu - card_cpu) / n:.2f} + fixed | - |"
        )
        for name, (wall1, cpu1, wallw, cpuw) in stages.items():
            per = n_test if name == "audit" else n
            print(
                f"| {name} (1 / {w} workers) | {wall1:.1f} / {wallw:.1f} s | {cpu1:.1f} / {cpuw:.1f} s | "
                f"{cpu1 / per:.2f}{' per test complex' if name == 'audit' else ''} | {wall1 / wallw:.2f}x |"
            )
        print(
            f"audit CPU / build CPU (shards + merge without the card baseline + validation): "
            f"{stages['audit'][1] / (gen_cpu + merge_cpu - card_cpu + stages['validation'][1]):.1%}"
        )
        # projection
        test_share = n_test / n
        # on free cores w workers would run w x (CPU of 1 / CPU of w) faster: the measured CPU
        # overhead of the parallel run (wall speed-ups cannot be measured on a busy machine)
        eff = {name: min(1.0, s[1] / s[3]) for name, s in stages.items()}
        per_gen, per_merge = gen_cpu / n, (merge_cpu - card_cpu) / n
        # the merge's unit of work is one shard file of at most max_shard_bytes: its share of the
        # paper-size release bounds the merge's wall time from below
        largest = min(
            1.0, BuildConfig().max_shard_bytes / max(1.0, published / n * PAPER_COMPLEXES)
        )
        # the card's baseline: at most MAX_QUESTIONS per task, solved in the merge's pool in
        # chunks of POOL_CHUNK questions (one chunk bounds it from below)
        per_question = card_cpu / max(solved, 1)
        card_fixed = max(
            per_question * pixel_solver.MAX_QUESTIONS * len(pixel_solver.TASKS) / NODE_CORES,
            per_question * pixel_solver.POOL_CHUNK,
        )
        per_val, per_audit = stages["validation"][1] / n, stages["audit"][1] / max(n_test, 1)
        N = PAPER_COMPLEXES
        push = published / n * N / (args.upload_mb_s * 1e6)
        rows = []
        settings = (
            ("one 16-core node", NODE_CORES),
            (f"{ARRAY_NODES}-node array", NODE_CORES * ARRAY_NODES),
        )
        for label, gen_cores in settings:
            shards = per_gen * N / gen_cores
            # one shard file per job on the node's cores; the largest job (one shard) bounds it
            merge = max(per_merge * N / NODE_CORES, largest * per_merge * N) + card_fixed
            val = per_val * N / (NODE_CORES * eff["validation"])
            audit = per_audit * N * test_share / (NODE_CORES * eff["audit"])
            rows.append((label, shards, merge, val, audit, push))
        print(
            f"projection to {N} complexes ({test_share:.0%} test; parallel efficiency from the CPU overhead "
            f"of {w} workers: validation {eff['validation']:.0%}, audit {eff['audit']:.0%}; card baseline "
            f"{pixel_solver.MAX_QUESTIONS} questions x {len(pixel_solver.TASKS)} tasks on {NODE_CORES} cores; "
            f"shards at the CPU-s measured with "
            f"{w} workers; push at {args.upload_mb_s:.0f} MB/s, {published / n * N / 1e9:.1f} GB)"
        )
        print(
            "| setting | shards | merge | validation | audit | push | total | total without push |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for label, *parts in rows:
            print(
                f"| {label} | " + " | ".join(_fmt(p) for p in parts) + f" | {_fmt(sum(parts))} | "
                f"{_fmt(sum(parts[:-1]))} |"
            )
        print(
            json.dumps(
                {
                    "complexes": n,
                    "cpu_per_complex": {
                        "shards": per_gen,
                        "merge": per_merge,
                        "validation": per_val,
                        "audit_per_test": per_audit,
                    },
                }
            )
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

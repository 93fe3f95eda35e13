"""Stage-by-stage cost of a build and its projection to the paper's size (3,993 complexes).

    python -m scripts.bench_scale [--source samples] [--limit N] [--workers 2]
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
CPUs). Each stage's CPU is measured in two parts with ``--workers`` processes: the main
process's (work that does not spread: it is projected on one core, per complex) and the worker
processes' (projected over the node's 16 cores, worker start-up included, so pessimistic on a
small build). The merge writes one shard file per job (bounded below by the largest job, one
shard of ``max_shard_bytes``) and runs the card's pixel-solver baseline in its workers (a fixed
cost: at most ``MAX_QUESTIONS`` per task); the audit covers the paper's 490 test complexes at the
CPU measured per test complex of this build.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from misi_bench.builder.checks import pixel_solver
from misi_bench.builder.checks.audit import audit_dataset
from misi_bench.builder.checks.validate import validate_dataset
from misi_bench.builder.dataset.build import build_dataset, plan, work_dir
from misi_bench.builder.dataset.config import BuildConfig
from misi_bench.builder.dataset.merge import merge_units
from misi_bench.builder.store.manifest import read_manifest

PAPER_COMPLEXES = 3993
#: The paper's test split (3,503 train + 490 test complexes; docs/spec.md section 9).
PAPER_TEST_COMPLEXES = 490
NODE_CORES = 16
ARRAY_NODES = 8


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its (finished) worker processes."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


@dataclass(frozen=True)
class Timed:
    """Wall seconds and CPU seconds of one stage: ``main`` in this process (work that does not
    spread over workers), ``workers`` in its worker processes."""

    wall: float
    main: float
    workers: float

    @property
    def cpu(self) -> float:
        return self.main + self.workers


def _timed(fn, *args, **kwargs):
    wall, (own, kids) = time.perf_counter(), _cpu()
    out = fn(*args, **kwargs)
    own1, kids1 = _cpu()
    return out, Timed(time.perf_counter() - wall, own1 - own, kids1 - kids)


def _projection(
    args, n, gen, merge, card, solved, stages, published, n_test, merge_fixed_main
) -> list[tuple]:
    """Projected wall seconds per stage of the paper's size, per setting (see the docstring)."""
    N = PAPER_COMPLEXES
    # the merge's unit of work is one shard file of at most max_shard_bytes: its share of the
    # paper-size release bounds the merge's parallel part from below
    largest = min(1.0, BuildConfig().max_shard_bytes / max(1.0, published / n * PAPER_COMPLEXES))
    # the card's pixel-solver baseline: at most MAX_QUESTIONS per task, in the merge's pool in
    # chunks of POOL_CHUNK questions (one chunk bounds it from below); it runs in the workers
    per_question = card.cpu / max(solved, 1)
    card_fixed = max(
        per_question * pixel_solver.MAX_QUESTIONS * len(pixel_solver.TASKS) / NODE_CORES,
        per_question * pixel_solver.POOL_CHUNK,
    )
    merge_workers = max(0.0, merge.workers - card.cpu)

    def spread(t: Timed, count: int, total: int, cores: int) -> float:
        """Wall seconds of ``total`` units when ``t`` measured ``count``: the main process's
        part on one core, the workers' part over ``cores``."""
        return t.main / count * total + t.workers / count * total / cores

    push = published / n * N / (args.upload_mb_s * 1e6)
    rows = []
    for label, nodes in (("one 16-core node", 1), (f"{ARRAY_NODES}-node array", ARRAY_NODES)):
        # every array task runs its own main process over its share of the complexes
        shards = spread(gen, n, N / nodes, NODE_CORES)
        merging = (
            merge.main / n * N
            + max(merge_workers / n * N / NODE_CORES, largest * merge_workers / n * N)
            + card_fixed
            + merge_fixed_main
        )
        val = spread(stages["validation"][1], n, N, NODE_CORES)
        audit = spread(stages["audit"][1], n_test, PAPER_TEST_COMPLEXES, NODE_CORES)
        rows.append((label, shards, merging, val, audit, push))
    print(
        f"projection to {N} complexes ({PAPER_TEST_COMPLEXES} test, as the paper's split): each "
        f"stage's main-process CPU on one core, its workers' CPU over {NODE_CORES} cores (both "
        f"measured with {args.workers} workers, worker start-up included); card baseline "
        f"{pixel_solver.MAX_QUESTIONS} questions x {len(pixel_solver.TASKS)} tasks on "
        f"{NODE_CORES} cores; push at {args.upload_mb_s:.0f} MB/s, {published / n * N / 1e9:.1f} GB"
    )
    return rows


def _fmt(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def _merge_main_cost(args, out: Path, tmp: Path, n: int, w: int) -> tuple[float, float]:
    """The merge's main process again, on half of the complexes and on all of them (both after
    every import is done): its CPU-s per complex (the slope, projected on one core) and its
    fixed part (the card's example strips, its metadata), told apart."""
    cfg = BuildConfig(source=args.source, limit=args.limit)
    refs, splits = plan(cfg)
    half = dict(list(refs.items())[: max(1, n // 2)])
    mains = {}
    for label, subset in (("half", half), ("all", refs)):
        target = tmp / f"merge-{label}"
        mains[label] = _timed(
            merge_units, target, work_dir(out, cfg), cfg, subset, splits, workers=w
        )[1].main
        shutil.rmtree(target, ignore_errors=True)
    per_main = max(0.0, (mains["all"] - mains["half"]) / (len(refs) - len(half)))
    merge_fixed_main = max(0.0, mains["all"] - per_main * len(refs))
    print(
        f"merge's main process: {mains['all']:.2f} CPU-s for {len(refs)} complexes, "
        f"{mains['half']:.2f} for {len(half)}: {per_main * 1000:.1f} ms per complex + "
        f"{merge_fixed_main:.2f} s fixed"
    )
    return per_main, merge_fixed_main


def _print_stages(w: int, n: int, n_test: int, gen, merge, card, solved: int, stages) -> None:
    """The measured stages as a Markdown table: wall and CPU time (s), CPU-s per complex and
    the speed-up from one worker to ``w``."""
    print(
        f"| stage | wall | CPU (main process + workers) | CPU-s per complex | speed-up 1 -> {w} workers |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| shards ({w} workers) | {gen.wall:.1f} s | {gen.cpu:.1f} s ({gen.main:.1f} + "
        f"{gen.workers:.1f}) | {gen.cpu / n:.2f} | - |"
    )
    print(
        f"| merge ({w} workers; of which the card's pixel-solver baseline, {solved} questions) | "
        f"{merge.wall:.1f} s | {merge.cpu:.1f} s ({merge.main:.1f} + {merge.workers:.1f}; "
        f"baseline {card.cpu:.1f} s) | {(merge.cpu - card.cpu) / n:.2f} + fixed | - |"
    )
    for name, (one, many) in stages.items():
        per = n_test if name == "audit" else n
        print(
            f"| {name} (1 / {w} workers) | {one.wall:.1f} / {many.wall:.1f} s | {one.cpu:.1f} / "
            f"{many.cpu:.1f} s ({many.main:.1f} + {many.workers:.1f}) | "
            f"{one.cpu / per:.2f}{' per test complex' if name == 'audit' else ''} | "
            f"{one.wall / many.wall:.2f}x |"
        )


def _print_projection(rows) -> None:
    """The projected stage times per setting as a Markdown table."""
    print("| setting | shards | merge | validation | audit | push | total | total without push |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, *parts in rows:
        print(
            f"| {label} | " + " | ".join(_fmt(p) for p in parts) + f" | {_fmt(sum(parts))} | "
            f"{_fmt(sum(parts[:-1]))} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
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
        _, gen = _timed(build_dataset, merge=False, workers=w, **common)
        _, merge = _timed(
            build_dataset, merge_only=True, validate=False, audit=False, workers=w, **common
        )
        manifest = read_manifest(out)
        # the card's pixel-solver baseline (part of the merge, in its workers) scores at most
        # MAX_QUESTIONS per task: a fixed cost at the paper's size, timed alone here
        _, card = _timed(pixel_solver.baseline_row, out, list(pixel_solver.TASKS))
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
            stages[name] = (_timed(fn, 1)[1], _timed(fn, w)[1])
        per_main, merge_fixed_main = _merge_main_cost(args, out, Path(tmp), n, w)
        merge = Timed(merge.wall, per_main * n, merge.workers)
        published = sum(v["bytes"] for v in manifest["shards"].values())
        questions = (
            manifest["totals"]["questions"]["train"] + manifest["totals"]["questions"]["test"]
        )
        print(
            f"build of {n} complexes ({n_test} test), {questions} questions, {published / 1e6:.1f} MB published"
        )
        _print_stages(w, n, n_test, gen, merge, card, solved, stages)
        build_cpu = gen.cpu + merge.cpu - card.cpu + stages["validation"][0].cpu
        print(
            f"audit CPU / build CPU (shards + merge without the card baseline + validation) of "
            f"this build ({n_test} of {n} complexes test): {stages['audit'][0].cpu / build_cpu:.1%}"
        )
        share = PAPER_TEST_COMPLEXES / PAPER_COMPLEXES
        print(
            f"the same at the paper's test share ({PAPER_TEST_COMPLEXES} of {PAPER_COMPLEXES}, "
            f"audit per test complex and build per complex as measured): "
            f"{stages['audit'][0].cpu / n_test * share / (build_cpu / n):.1%}"
        )
        rows = _projection(
            args, n, gen, merge, card, solved, stages, published, n_test, merge_fixed_main
        )
        _print_projection(rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

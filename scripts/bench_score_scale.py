"""Benchmark of ``misi-bench score`` at the paper's size: real rows of a build (train and test,
every config) repeated under new ids (each repetition its own complexes, ``<pdb_id>-<k>``) into
a test split of N questions, scored by the real command (``python -m misi_bench score``, with the
baselines, floors, margins and intervals it prints by default) in a child process per size.
Prints, per size, the child's CPU seconds and peak RSS (``getrusage`` of the child itself, its
imports included), with the build's per-question baselines file (``question_baselines.npz``) and,
up to ``--computed-up-to`` questions, without it (an older build: today's computed route), and
the CPU the file costs to compute once at build time.

Usage: ``python -m scripts.bench_score_scale [--build FOLDER] [--sizes 5000 20000 100000 163514]``
(without ``--build`` it builds the embedded samples first, about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger("bench_score_scale")

SIZES = (5_000, 20_000, 100_000, 163_514)
#: Repetitions get new ids (``<id>~<k>``) and new complexes (``<pdb_id>-<k>``).
SEPARATOR = "~"


def _base_rows(build: Path, splits=("test", "train")) -> list[dict]:
    from misi_bench.builder.core.registry import TASK_NAMES
    from misi_bench.builder.core.rows import COLUMNS
    from misi_bench.builder.store.parquet import iter_config_rows

    names = [name for name, kind in COLUMNS if kind != "images"]
    return [
        {**r, "images": []}
        for split in splits
        for task in TASK_NAMES
        for r in iter_config_rows(build, task, split, names)
    ]


def _repeated(rows: list[dict], n: int) -> list[dict]:
    out = []
    k = 0
    while len(out) < n:
        for row in rows[: n - len(out)]:
            meta = json.loads(row["metadata"])
            meta["pdb_id"] = f"{meta.get('pdb_id')}-{k}"
            out.append(
                {
                    **row,
                    "id": f"{row['id']}{SEPARATOR}{k}",
                    "metadata": json.dumps(meta, sort_keys=True),
                    "images": [],
                }
            )
        k += 1
    return out


def make_dataset(build: Path, folder: Path, n: int) -> tuple[list[dict], float]:
    """A build folder of ``n`` test questions made from ``build``'s rows, with its per-question
    baselines file; returns its rows and the CPU seconds that file took to compute."""
    from misi_bench.builder.core.registry import TASK_NAMES
    from misi_bench.builder.scoring import question_baselines as qb
    from misi_bench.builder.store.manifest import read_manifest, sha256_file, write_manifest
    from misi_bench.builder.store.parquet import write_shard

    rows = _repeated(_base_rows(build), n)
    manifest = read_manifest(build)
    shards, counts = {}, {}
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)
    rows = [r for t in TASK_NAMES for r in by_task.get(t, [])]  # build order
    train: dict[str, list[dict]] = {}
    for row in _base_rows(build, ("train",)):  # the text-only model of the computed route
        train.setdefault(row["task"], []).append(row)
    for split, groups in (("test", by_task), ("train", train)):
        for task, got in groups.items():
            (folder / task).mkdir(parents=True, exist_ok=True)
            path = write_shard(got, folder / task, split, 0, 1)
            shards[path.relative_to(folder).as_posix()] = {
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
            }
            counts.setdefault(task, {"train": 0, "test": 0, "tiny": 0})[split] = len(got)
    blind = json.loads((build / "baselines.json").read_text(encoding="utf-8"))
    images = {}
    for split in ("test", "train"):
        images.update((blind.get("image_answers") or {}).get(split) or {})
    new_images = {
        r["id"]: images[r["id"].split(SEPARATOR)[0]]
        for r in rows
        if r["id"].split(SEPARATOR)[0] in images
    }
    start = time.process_time()
    table = qb.compute_question_baselines(rows, blind["text_model"], new_images, qb.SEED, "test")
    cost = time.process_time() - start
    data = qb.question_baselines_bytes({"test": table})
    (folder / qb.FILE).write_bytes(data)
    stored = {**blind, "image_answers": {"test": new_images}}
    (folder / "baselines.json").write_text(json.dumps(stored), encoding="utf-8")
    manifest.update(shards=shards, counts=counts)
    manifest[qb.MANIFEST_KEY] = qb.file_entry(data)
    write_manifest(folder, manifest)
    return rows, cost


def write_predictions(rows: list[dict], path: Path) -> None:
    """A third of the answers verbatim, a third behind a marker, a third unreadable."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, row in enumerate(rows):
            text = (row["answer"], f"Answer: {row['answer']}", "I cannot tell")[i % 3]
            fh.write(json.dumps({"id": row["id"], "prediction": text}) + "\n")


def run_score(dataset: Path, predictions: Path, out: Path) -> dict:
    """``python -m misi_bench score`` in a child process: its exit code, CPU seconds and peak
    RSS (``os.wait4``: the child's own resource use, its imports included)."""
    args = ["score", "--dataset", str(dataset), "--predictions", str(predictions)]
    log_path = out.with_suffix(".log")
    with open(log_path, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "misi_bench", *args, "--json-out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=fh,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    got = {
        "rc": proc.returncode,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }
    if proc.returncode:
        got["error"] = log_path.read_text(encoding="utf-8")[-300:]
    return got


def _build_samples(work: Path) -> Path:
    out = work / "samples"
    if not (out / "manifest.json").is_file():
        cmd = [
            sys.executable,
            "-m",
            "misi_bench",
            "build",
            "--source",
            "samples",
            "--out",
            str(out),
        ]
        subprocess.run([*cmd, "--workers", "2"], check=True, capture_output=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, help="a build folder (default: build the samples)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--computed-up-to", type=int, default=20_000)
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-score-") as tmp:
        work = args.work or Path(tmp)
        build = args.build or _build_samples(work)
        print(f"rows from {build}")
        head = f"{'questions':>10} {'route':>9} {'CPU s':>8} {'peak MB':>8} {'file CPU s':>10}"
        print(head)
        for n in args.sizes:
            folder = work / f"n{n}"
            rows, cost = make_dataset(build, folder, n)
            preds = folder / "predictions.jsonl"
            write_predictions(rows, preds)
            got = run_score(folder, preds, folder / "report.json")
            print(
                f"{n:>10} {'file':>9} {got.get('cpu_s', float('nan')):>8.2f} "
                f"{got.get('peak_rss_mb', float('nan')):>8.0f} {cost:>10.2f}"
                + (f"  FAILED {got}" if got.get("rc") != 0 else "")
            )
            if n <= args.computed_up_to:
                (folder / "question_baselines.npz").unlink()
                old = run_score(folder, preds, folder / "report_computed.json")
                same = _same_numbers(folder / "report.json", folder / "report_computed.json")
                print(
                    f"{n:>10} {'computed':>9} {old.get('cpu_s', float('nan')):>8.2f} "
                    f"{old.get('peak_rss_mb', float('nan')):>8.0f} {'':>10}  "
                    f"same baselines and floors as the file route: {same}"
                )
            sys.stdout.flush()


def _same_numbers(a: Path, b: Path) -> bool:
    try:
        one, two = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
    except (OSError, ValueError):
        return False
    keys = ("baselines", "blind_floor", "report")
    return all(one.get(k) == two.get(k) for k in keys)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Export speed, output size and peak memory of ``export-sft`` for every format.

``python -m scripts.bench_export DIR`` (a build folder; ``--build-samples``
first builds the 19 embedded samples into DIR with ``misi-bench build``). Each export runs in its
own process so its peak resident memory (ru_maxrss) is its own; the export time excludes the
interpreter start and imports. ``--scale K`` also exports a folder that lists every train shard
K times (hard links), to show that memory stays flat while rows grow K-fold. Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from misi_bench.builder.core.shards import config_shards, shard_name

_CHILD = """
import json, resource, sys, time
import datasets, pyarrow  # imported before timing
from misi_bench.eval_plugins.finetune.export import export_sft
r = export_sft(sys.argv[1], sys.argv[2], sys.argv[3], progress=False)
maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rows": r.total_rows, "seconds": r.seconds, "bytes": r.bytes, "image_refs": r.image_refs,
                  "images_written": r.images_written, "maxrss_mb": maxrss_mb}))
"""
FORMATS = ("hf", "llamafactory", "swift")


def _cli(*args: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys, misi_bench; sys.exit(misi_bench.main(sys.argv[1:]))",
        *args,
    ]


def _export(source: Path, out: Path, fmt: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(source), str(out), fmt],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _scaled(source: Path, dest: Path, k: int) -> Path:
    """A folder whose configs list each train shard ``k`` times (hard links, no copies)."""
    for config in sorted(p for p in source.iterdir() if p.is_dir()):
        shards = config_shards(source, config.name, "train")
        if not shards:
            continue
        (dest / config.name).mkdir(parents=True)
        n = len(shards) * k
        for j in range(n):
            os.link(shards[j % len(shards)], dest / config.name / shard_name("train", j, n))
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="build folder")
    ap.add_argument(
        "--build-samples", action="store_true", help="first build the 19 embedded samples into DATA"
    )
    ap.add_argument(
        "--scale",
        type=int,
        default=4,
        help="also export the train shards repeated K times (0: skip)",
    )
    args = ap.parse_args(argv)
    if args.build_samples:
        subprocess.run(
            _cli(
                "build", "--source", "samples", "--workers", "2", "--quiet", "--out", str(args.data)
            ),
            check=True,
        )
    work = Path(tempfile.mkdtemp(prefix="misi-sft-bench-"))
    try:
        sources = {"1x": args.data}
        if args.scale > 1:
            sources[f"{args.scale}x"] = _scaled(args.data, work / "scaled", args.scale)
        print(
            "| format | source | rows | rows/s | output MB | image refs | image files | peak RSS MB |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for fmt in FORMATS:
            for label, source in sources.items():
                r = _export(source, work / f"{fmt}-{label}", fmt)
                files = "in Parquet" if r["images_written"] is None else r["images_written"]
                print(
                    f"| {fmt} | {label} | {r['rows']} | {r['rows'] / r['seconds']:.0f} | {r['bytes'] / 1e6:.1f} | "
                    f"{r['image_refs']} | {files} | {r['maxrss_mb']:.0f} |",
                    flush=True,
                )
                shutil.rmtree(work / f"{fmt}-{label}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

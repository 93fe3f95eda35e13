"""Published bytes per image reference of a build, with the shard writer's settings against
Parquet's defaults, and what lossless codecs would give.

    python -m scripts.bench_bytes FOLDER [--codec-sample 40]

Rewrites every published shard (train, test, tiny) of FOLDER in memory, row group by row group
as ``parquet.ShardWriter`` writes them: as the issue found them (every image re-encoded with
the Pillow PNG encoder at zlib level 1 of builder <= 0.5.0, row groups of 64 rows, Parquet's
default dictionary page limit: the image column falls back to plain encoding after about a dozen
images), with Parquet's default limit and our images, and with this project's
``DICTIONARY_PAGE_BYTES`` (each distinct image once per row group); checks that each reads back
to the rows written; prints bytes per image reference, the savings against the issue's writer,
and the projected size of a release of the paper's 3,993 complexes (from this build's image
references per complex). Then re-encodes ``--codec-sample`` distinct images with other lossless
settings (ours, Pillow PNG zlib levels, WebP lossless) and prints their size against the stored
PNGs, their encoding time and whether the decoded pixels are identical.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from misi_bench.builder.dataset.footprint import (
    CODECS,
    codec_sizes,
    image_references,
    pillow_png_1,
    rewritten_bytes,
    stored_images,
)
from misi_bench.builder.store.manifest import read_manifest
from misi_bench.builder.store.parquet import DICTIONARY_PAGE_BYTES

PAPER_COMPLEXES = 3993


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--codec-sample", type=int, default=40)
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    manifest = read_manifest(folder)
    shards = sorted(folder / name for name in manifest["shards"])
    refs = sum(image_references(p) for p in shards)
    stored = sum(p.stat().st_size for p in shards)
    issue, issue_same = zip(
        *(rewritten_bytes(p, None, pillow_png_1, issue_groups=True) for p in shards)
    )
    plain, plain_same = zip(*(rewritten_bytes(p, None) for p in shards))
    dictionary, dict_same = zip(*(rewritten_bytes(p, DICTIONARY_PAGE_BYTES) for p in shards))
    complexes = manifest["complexes"]["total"] - len(manifest.get("skipped_complexes", {}))
    print(f"{folder}: {len(shards)} shards, {refs} image references, {complexes} complexes")
    for name, size, same in (
        ("as stored", stored, True),
        ("issue's writer (Pillow PNG 1, default)", sum(issue), all(issue_same)),
        ("Parquet default dictionary limit", sum(plain), all(plain_same)),
        (f"dictionary limit {DICTIONARY_PAGE_BYTES >> 20} MB", sum(dictionary), all(dict_same)),
    ):
        paper = size / complexes * PAPER_COMPLEXES
        print(
            f"  {name:34s} {size / 1e6:8.1f} MB, {size / refs / 1e3:5.1f} KB per image reference, "
            f"same rows: {same}; paper size ({PAPER_COMPLEXES} complexes): {paper / 1e9:5.1f} GB"
        )
    print(
        f"  saving of the dictionary limit: {1 - sum(dictionary) / sum(plain):.1%} fewer bytes per image reference"
    )
    print(
        f"  saving against the issue's writer: {1 - stored / sum(issue):.1%} fewer bytes per image "
        f"reference (the encoder alone: {1 - sum(plain) / sum(issue):.1%})"
    )
    pngs = [png for path in shards for png in stored_images(path)]
    distinct = list(dict.fromkeys(pngs))
    sample = distinct[:: max(1, len(distinct) // max(1, args.codec_sample))][: args.codec_sample]
    print(
        f"lossless codecs on {len(sample)} distinct images ({len(distinct)} distinct of {len(pngs)} references):"
    )
    for name, (share, ms, same) in zip(CODECS, codec_sizes(sample)):
        print(
            f"  {name:36s} {share:6.1%} of the stored bytes, {ms:6.1f} ms/image, pixels identical: {same}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

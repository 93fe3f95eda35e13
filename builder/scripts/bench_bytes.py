"""Published bytes per image reference of a build, with the shard writer's settings against
Parquet's defaults, and what lossless codecs would give.

    python -m misi_bench.builder.scripts.bench_bytes FOLDER [--codec-sample 40]

Rewrites every published shard (train, test, tiny) of FOLDER in memory twice, row group by row
group as ``parquet.ShardWriter`` writes them: with Parquet's default dictionary page limit (1 MB:
the image column falls back to plain encoding after about a dozen images) and with this
project's ``DICTIONARY_PAGE_BYTES`` (each distinct image once per row group); checks that both
read back to the very same rows; prints bytes per image reference, the saving, and the
projected size of a release of the paper's 3,993 complexes (from this build's image references
per complex). Then re-encodes ``--codec-sample`` distinct images with other lossless settings
(PNG zlib levels, WebP lossless) and prints their size against the stored PNGs, their encoding
time and whether the decoded pixels are identical.
"""
from __future__ import annotations

import argparse
import io
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from ..dataset.manifest import read_manifest
from ..dataset.parquet import DICTIONARY_PAGE_BYTES, ROW_GROUP_ROWS, arrow_schema

PAPER_COMPLEXES = 3993


def _rewrite(path: Path, dictionary_limit: int | None) -> tuple[int, bool]:
    """(bytes, same rows) of one shard written again row group by row group."""
    schema = arrow_schema()
    source = pq.ParquetFile(path)
    buf = io.BytesIO()
    kwargs = {"dictionary_pagesize_limit": dictionary_limit} if dictionary_limit else {}
    writer = pq.ParquetWriter(buf, schema, compression="zstd", write_statistics=False, **kwargs)
    rows = []
    for g in range(source.num_row_groups):
        part = source.read_row_group(g).to_pylist()
        rows += part
        writer.write_table(pa.Table.from_pylist(part, schema=schema), row_group_size=ROW_GROUP_ROWS)
    writer.close()
    data = buf.getvalue()
    return len(data), pq.read_table(io.BytesIO(data), schema=schema).to_pylist() == rows


def _codecs(pngs: list[bytes]) -> None:
    settings = [("PNG zlib 1 (stored)", dict(format="PNG", compress_level=1)),
                ("PNG zlib 9", dict(format="PNG", compress_level=9)),
                ("WebP lossless, method 1, quality 25", dict(format="WEBP", lossless=True, method=1, quality=25)),
                ("WebP lossless, method 4", dict(format="WEBP", lossless=True, method=4, quality=100))]
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    base = sum(len(p) for p in pngs)
    for name, kwargs in settings:
        start, out = time.process_time(), []
        for image in images:
            buf = io.BytesIO()
            image.save(buf, **kwargs)
            out.append(buf.getvalue())
        ms = 1000 * (time.process_time() - start) / len(images)
        same = all(np.array_equal(np.asarray(Image.open(io.BytesIO(o)).convert("RGB")), np.asarray(i))
                   for o, i in zip(out, images))
        print(f"  {name:36s} {sum(map(len, out)) / base:6.1%} of the stored bytes, {ms:6.1f} ms/image, "
              f"pixels identical: {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--codec-sample", type=int, default=40)
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    manifest = read_manifest(folder)
    shards = sorted(folder / name for name in manifest["shards"])
    refs = sum(len(r["image_views"]) for p in shards for r in pq.read_table(p, columns=["image_views"]).to_pylist())
    stored = sum(p.stat().st_size for p in shards)
    plain, plain_same = zip(*(_rewrite(p, None) for p in shards))
    dictionary, dict_same = zip(*(_rewrite(p, DICTIONARY_PAGE_BYTES) for p in shards))
    complexes = manifest["complexes"]["total"] - len(manifest.get("skipped_complexes", {}))
    print(f"{folder}: {len(shards)} shards, {refs} image references, {complexes} complexes")
    for name, size, same in (("as stored", stored, True), ("Parquet default dictionary limit", sum(plain), all(plain_same)),
                             (f"dictionary limit {DICTIONARY_PAGE_BYTES >> 20} MB", sum(dictionary), all(dict_same))):
        paper = size / complexes * PAPER_COMPLEXES
        print(f"  {name:34s} {size / 1e6:8.1f} MB, {size / refs / 1e3:5.1f} KB per image reference, "
              f"same rows: {same}; paper size ({PAPER_COMPLEXES} complexes): {paper / 1e9:5.1f} GB")
    print(f"  saving of the dictionary limit: {1 - sum(dictionary) / sum(plain):.1%} fewer bytes per image reference")
    pngs: list[bytes] = []
    for path in shards:
        for row in pq.read_table(path, columns=["images"]).to_pylist():
            pngs += [img["bytes"] for img in row["images"]]
    distinct = list(dict.fromkeys(pngs))
    sample = distinct[:: max(1, len(distinct) // max(1, args.codec_sample))][: args.codec_sample]
    print(f"lossless codecs on {len(sample)} distinct images ({len(distinct)} distinct of {len(pngs)} references):")
    _codecs(sample)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Measures of the published bytes (``scripts/bench_bytes``): shards written again with other
writer settings, and images encoded with other lossless codecs."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from ..scene.png import PNG_ENCODER, encode_image
from ..store.parquet import arrow_schema, row_bytes


def _pillow(**kwargs) -> Callable[[Image.Image], bytes]:
    def encode(image: Image.Image) -> bytes:
        buf = io.BytesIO()
        image.save(buf, **kwargs)
        return buf.getvalue()

    return encode


#: The PNG encoder of builder 0.5.0 and before (Pillow, zlib level 1), the issue's reference.
PILLOW_PNG_1 = _pillow(format="PNG", compress_level=1)

#: Lossless encodings compared with the stored PNGs (name -> encoder of a Pillow RGB image).
CODECS: dict[str, Callable[[Image.Image], bytes]] = {
    f"ours: {PNG_ENCODER} (stored)": encode_image,
    "ours at libdeflate level 6 (render version 6 and before)": partial(encode_image, level=6),
    "ours at libdeflate level 4": partial(encode_image, level=4),
    "PNG Pillow zlib 1 (builder <= 0.5.0)": PILLOW_PNG_1,
    "PNG Pillow zlib 9": _pillow(format="PNG", compress_level=9),
    "WebP lossless, method 1, quality 25": _pillow(
        format="WEBP", lossless=True, method=1, quality=25
    ),
    "WebP lossless, method 4": _pillow(format="WEBP", lossless=True, method=4, quality=100),
}


def pillow_png_1(png: bytes) -> bytes:
    """The same picture as the issue's encoder wrote it (Pillow PNG, zlib level 1)."""
    with Image.open(io.BytesIO(png)) as image:
        return PILLOW_PNG_1(image.convert("RGB"))


def image_references(path: Path) -> int:
    """Image references (images of all rows) of one shard."""
    return sum(
        len(r["image_views"]) for r in pq.read_table(path, columns=["image_views"]).to_pylist()
    )


def stored_images(path: Path) -> list[bytes]:
    """The image bytes of every row of one shard, in order."""
    return [
        img["bytes"]
        for r in pq.read_table(path, columns=["images"]).to_pylist()
        for img in r["images"]
    ]


#: The row groups of the shard writer at the issue's filing: 64 rows, or fewer once they held
#: 24 MB, whatever the complexes.
ISSUE_GROUP_ROWS, ISSUE_GROUP_BYTES = 64, 24 * 1024 * 1024


def _issue_groups(rows: list[dict]) -> list[list[dict]]:
    groups: list[list[dict]] = [[]]
    size = 0
    for row in rows:
        groups[-1].append(row)
        size += row_bytes(row)
        if len(groups[-1]) >= ISSUE_GROUP_ROWS or size >= ISSUE_GROUP_BYTES:
            groups.append([])
            size = 0
    return [g for g in groups if g]


def rewritten_bytes(
    path: Path,
    dictionary_limit: int | None,
    reencode: Callable[[bytes], bytes] | None = None,
    issue_groups: bool = False,
) -> tuple[int, bool]:
    """(bytes, same rows) of one shard written again, zstd as ``parquet.ShardWriter`` writes
    shards, in its row groups (or, with ``issue_groups``, in the writer's row groups at the
    issue's filing), with the dictionary page limit ``dictionary_limit`` (None: Parquet's default)
    and, if given, every image re-encoded by ``reencode`` (equal stored images give equal
    re-encoded bytes; "same rows" then compares with the re-encoded rows)."""
    schema = arrow_schema()
    source = pq.ParquetFile(path)
    groups = [source.read_row_group(g).to_pylist() for g in range(source.num_row_groups)]
    if reencode is not None:
        recoded: dict[bytes, bytes] = {}
        for row in (row for group in groups for row in group):
            for img in row["images"]:
                if img["bytes"] not in recoded:
                    recoded[img["bytes"]] = reencode(img["bytes"])
                img["bytes"] = recoded[img["bytes"]]
    rows = [row for group in groups for row in group]
    if issue_groups:
        groups = _issue_groups(rows)
    buf = io.BytesIO()
    kwargs = {"dictionary_pagesize_limit": dictionary_limit} if dictionary_limit else {}
    writer = pq.ParquetWriter(buf, schema, compression="zstd", write_statistics=False, **kwargs)
    for group in groups:
        writer.write_table(pa.Table.from_pylist(group, schema=schema), row_group_size=len(group))
    writer.close()
    data = buf.getvalue()
    return len(data), pq.read_table(io.BytesIO(data), schema=schema).to_pylist() == rows


def codec_sizes(pngs: list[bytes]) -> list[tuple[float, float, bool]]:
    """Per codec of :data:`CODECS`: (bytes as a share of ``pngs``, encoding ms per image, whether
    every decoded picture equals the PNG's)."""
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    base = sum(len(p) for p in pngs)
    out = []
    for encode in CODECS.values():
        start = time.process_time()
        encoded = [encode(image) for image in images]
        ms = 1000 * (time.process_time() - start) / max(1, len(images))
        same = all(
            np.array_equal(np.asarray(Image.open(io.BytesIO(e)).convert("RGB")), np.asarray(i))
            for e, i in zip(encoded, images)
        )
        out.append((sum(map(len, encoded)) / base, ms, same))
    return out

"""Each distinct image of a local shard's row group read once, from the image column's pages.

Builds store the image column dictionary-encoded within each row group
(``builder.store.parquet``): questions that show the same view share one dictionary entry.
pyarrow gives that column either densely (the image copied again for every row that shows it)
or, with ``read_dictionary``, through a hash table built over every image; either costs more
client CPU than sending the request. This module reads the column chunk itself: its dictionary
page (each distinct image once, decompressed by pyarrow's codec) and its data pages' levels and
dictionary indices (Parquet's RLE / bit-packed hybrid), so a row's images are indices into the
row group's distinct images.

It reads only the layout our builds write (``images: list<struct<bytes, path>>``, a dictionary
page, dictionary-encoded data pages v1 or v2, no image that needs its ``path``); anything else
raises :class:`Unsupported` and the caller reads that row group with pyarrow instead.
"""

from __future__ import annotations

import mmap
from collections.abc import Sequence

#: Leaf column of the image bytes, and the levels of ``list<struct<bytes, path>>`` above it.
IMAGE_BYTES = "images.list.element.bytes"
_MAX_REP, _MAX_DEF = 1, 4
#: Definition level of a null list element (a row whose image entry is missing).
_NULL_ELEMENT = 2
#: Parquet codec names -> pyarrow codec names (None: stored uncompressed).
_CODECS = {"UNCOMPRESSED": None, "ZSTD": "zstd", "SNAPPY": "snappy", "GZIP": "gzip"}
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
_PLAIN, _PLAIN_DICTIONARY, _RLE, _RLE_DICTIONARY = 0, 2, 3, 8


class Unsupported(Exception):
    """The column chunk is not laid out as this reader expects (read it with pyarrow)."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _zigzag(buf: bytes, pos: int) -> tuple[int, int]:
    v, pos = _varint(buf, pos)
    return (v >> 1) ^ -(v & 1), pos


def _value(buf: bytes, pos: int, kind: int):
    """One Thrift compact-protocol value of type ``kind`` at ``pos``; returns (value, pos)."""
    if kind in (1, 2):  # a bool inside a list (in a struct the type itself holds it)
        return buf[pos] == 1, pos + 1
    if kind == 3:
        return buf[pos], pos + 1
    if kind in (4, 5, 6):
        return _zigzag(buf, pos)
    if kind == 7:
        return None, pos + 8
    if kind == 8:
        n, pos = _varint(buf, pos)
        return buf[pos : pos + n], pos + n
    if kind in (9, 10):
        head = buf[pos]
        pos += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _varint(buf, pos)
        items = []
        for _ in range(size):
            item, pos = _value(buf, pos, elem)
            items.append(item)
        return items, pos
    if kind == 11:
        size, pos = _varint(buf, pos)
        if size:
            types = buf[pos]
            pos += 1
            for _ in range(2 * size):
                _, pos = _value(buf, pos, types >> 4 if _ % 2 == 0 else types & 0x0F)
        return None, pos
    if kind == 12:
        return _struct(buf, pos)
    raise Unsupported(f"Thrift type {kind}")


def _struct(buf: bytes, pos: int) -> tuple[dict, int]:
    """A Thrift compact-protocol struct as ``{field id: value}``; returns (struct, end)."""
    fields: dict = {}
    last = 0
    while True:
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        kind, delta = head & 0x0F, head >> 4
        if delta:
            last += delta
        else:
            last, pos = _zigzag(buf, pos)
        if kind in (1, 2):
            fields[last] = kind == 1
        else:
            fields[last], pos = _value(buf, pos, kind)


def _hybrid(buf: bytes, pos: int, end: int, width: int, count: int) -> list[int]:
    """``count`` values of Parquet's RLE / bit-packed hybrid encoding in ``buf[pos:end]``."""
    if width == 0:
        return [0] * count
    out: list[int] = []
    mask = (1 << width) - 1
    nbytes = (width + 7) // 8
    while len(out) < count:
        if pos >= end:
            raise Unsupported("levels or indices end early")
        header, pos = _varint(buf, pos)
        if header & 1:  # bit-packed: groups of 8 values in `width` bytes each
            for _ in range(header >> 1):
                group = int.from_bytes(buf[pos : pos + width], "little")
                pos += width
                out.extend((group >> (width * i)) & mask for i in range(8))
        else:
            value = int.from_bytes(buf[pos : pos + nbytes], "little")
            pos += nbytes
            out.extend([value] * (header >> 1))
    del out[count:]
    return out


def _levels(buf: bytes, pos: int, width: int, count: int) -> tuple[list[int], int]:
    """Levels of a v1 data page: a 4-byte length, then the hybrid encoding."""
    n = int.from_bytes(buf[pos : pos + 4], "little")
    return _hybrid(buf, pos + 4, pos + 4 + n, width, count), pos + 4 + n


class _Decoder:
    def __init__(self, codec_name: str):
        if codec_name not in _CODECS:
            raise Unsupported(f"codec {codec_name}")
        name = _CODECS[codec_name]
        if name is None:
            self.codec = None
        else:
            import pyarrow as pa  # noqa: PLC0415

            self.codec = pa.Codec(name)

    def __call__(self, data: memoryview, size: int) -> memoryview:
        if self.codec is None:
            return data
        out = self.codec.decompress(data, decompressed_size=size, asbytes=False)
        return memoryview(out).cast("B")  # pyarrow exports signed chars


def image_column(parquet_file) -> int | None:
    """Index of the image bytes leaf in ``parquet_file`` (a ``pq.ParquetFile``) when its
    levels are those of our schema, else None."""
    schema = parquet_file.schema
    for i in range(len(schema)):
        col = schema.column(i)
        if col.path == IMAGE_BYTES:
            levels = (col.max_repetition_level, col.max_definition_level)
            return i if levels == (_MAX_REP, _MAX_DEF) else None
    return None


def row_group_images(
    shard, parquet_file, group: int, column: int
) -> tuple[list[memoryview], list[tuple[int | None, ...]]]:
    """The distinct images of row group ``group`` (its dictionary, in order) and each row's
    images as indices into it (None: a null image entry).

    ``shard``: the whole shard as a buffer (an ``mmap``: its pages are decoded where they lie,
    and an uncompressed chunk's images are views into it, never copied here) or the shard
    opened binary (the column chunk is read into memory)."""
    meta = parquet_file.metadata.row_group(group)
    chunk = meta.column(column)
    if not chunk.has_dictionary_page or not chunk.dictionary_page_offset:
        raise Unsupported("no dictionary page")
    start, size = chunk.dictionary_page_offset, chunk.total_compressed_size
    if isinstance(shard, (bytes, bytearray, memoryview, mmap.mmap)):
        raw = memoryview(shard)[start : start + size]
    else:
        shard.seek(start)
        raw = memoryview(shard.read(size))
    if len(raw) != size:
        raise Unsupported("the column chunk ends after the file")
    decode = _Decoder(chunk.compression)
    values: list[memoryview] | None = None
    reps: list[int] = []
    defs: list[int] = []
    indices: list[int] = []
    pos = 0
    while pos < len(raw):
        header, pos = _struct(raw, pos)
        kind, size, packed = header.get(1), header.get(2), header.get(3)
        body = raw[pos : pos + packed]
        pos += packed
        if kind == _DICTIONARY_PAGE:
            page = header.get(7) or {}
            if values is not None or page.get(2) not in (_PLAIN, _PLAIN_DICTIONARY):
                raise Unsupported("dictionary page")
            values = _plain_values(decode(body, size), page.get(1, 0))
        elif kind == _DATA_PAGE:
            _data_page_v1(decode(body, size), header.get(5) or {}, reps, defs, indices)
        elif kind == _DATA_PAGE_V2:
            _data_page_v2(body, size, header.get(8) or {}, decode, reps, defs, indices)
        else:
            raise Unsupported(f"page type {kind}")
    if values is None:
        raise Unsupported("no dictionary page")
    rows = _rows(reps, defs, indices, len(values))
    if len(rows) != meta.num_rows:
        raise Unsupported(f"{len(rows)} rows decoded, {meta.num_rows} in the row group")
    return values, rows


def _plain_values(data: memoryview, count: int) -> list[memoryview]:
    out, pos = [], 0
    for _ in range(count):
        n = int.from_bytes(data[pos : pos + 4], "little")
        out.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    if pos != len(data):
        raise Unsupported("dictionary page size")
    if not all(out):  # an empty image: its path column would give it
        raise Unsupported("an empty image")
    return out


def _data_page_v1(data: memoryview, page: dict, reps, defs, indices) -> None:
    count = page.get(1, 0)
    if page.get(2) not in (_PLAIN_DICTIONARY, _RLE_DICTIONARY) or page.get(3) != _RLE:
        raise Unsupported("data page encoding")
    if page.get(4) != _RLE:  # levels encoding (the deprecated BIT_PACKED is not read here)
        raise Unsupported("level encoding")
    rep, pos = _levels(data, 0, _MAX_REP.bit_length(), count)
    dfs, pos = _levels(data, pos, _MAX_DEF.bit_length(), count)
    _indices(data, pos, dfs, rep, reps, defs, indices)


def _data_page_v2(body: memoryview, size: int, page: dict, decode, reps, defs, indices) -> None:
    count, rep_len, def_len = page.get(1, 0), page.get(6, 0), page.get(5, 0)
    if page.get(4) not in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
        raise Unsupported("data page encoding")
    rep = _hybrid(body, 0, rep_len, _MAX_REP.bit_length(), count)
    dfs = _hybrid(body, rep_len, rep_len + def_len, _MAX_DEF.bit_length(), count)
    rest = body[rep_len + def_len :]
    if page.get(7, True):
        rest = decode(rest, size - rep_len - def_len)
    _indices(rest, 0, dfs, rep, reps, defs, indices)


def _indices(data: memoryview, pos: int, dfs, rep, reps, defs, indices) -> None:
    present = sum(1 for d in dfs if d == _MAX_DEF)
    if present:
        indices += _hybrid(data, pos + 1, len(data), data[pos], present)
    reps += rep
    defs += dfs


def _rows(
    reps: Sequence[int], defs: Sequence[int], indices: Sequence[int], n_values: int
) -> list[tuple[int | None, ...]]:
    """Each row's image indices from the levels: a repetition level 0 starts a row; definition
    level 4 is an image, 2 a null image entry, 0 or 1 a row without images (null or empty list);
    3 (an image given by its path only) is not read here."""
    rows: list[list[int | None]] = []
    it = iter(indices)
    for r, d in zip(reps, defs):
        if r == 0:
            rows.append([])
        elif not rows:
            raise Unsupported("levels start inside a row")
        if d == _MAX_DEF:
            i = next(it)
            if i >= n_values:
                raise Unsupported("dictionary index out of range")
            rows[-1].append(i)
        elif d == _NULL_ELEMENT:
            rows[-1].append(None)
        elif d > _NULL_ELEMENT:
            raise Unsupported("an image without bytes")
    return [tuple(r) for r in rows]

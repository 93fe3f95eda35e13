"""Questions for ``misi-bench eval``: where they are, which revision, and the request messages.

A dataset is a local build folder (``<config>/<split>-*.parquet``, read one row group at a time,
its images by :mod:`.pages`) or a Hub repo (the revision's shards of the split fetched into the
Hub cache, then read the same way). Every shard is checked against the build's manifest
(``core.shards.checked_shards``). Memory stays at one row group's images (builds close row groups at
``ROW_GROUP_BYTES``; twice that while its image chunk is decompressed) whatever the split size.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import mmap
import os
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...builder.core.constants import hub_repo_id, hub_revision
from ...builder.core.errors import MisiError
from ...builder.core.registry import TASK_NAMES, canonical_configs
from ...builder.core.rows import SCORE_COLUMNS as ROW_SCORE_COLUMNS
from ...builder.core.shards import checked_shards
from ..common import doc_prompt
from . import pages
from .hub import hub_commit

log = logging.getLogger(__name__)

#: Columns the scorer needs, and those a request needs.
SCORE_COLUMNS = list(ROW_SCORE_COLUMNS)
PROMPT_COLUMNS = ["id", "task", "question", "images"]
BATCH_ROWS = 16
_DATA_URL = "data:image/png;base64,"
#: One image's item of a request's content list, as ``json.dumps`` writes it (compact
#: separators), around its base64 text; the comma before the next item (the text) included.
_ITEM_HEAD = b'{"type":"image_url","image_url":{"url":"' + _DATA_URL.encode()
_ITEM_TAIL = b'"}},'
#: Placeholder of the image items in :func:`request_body` (random per process, so no question
#: text holds it), as ``json.dumps`` writes it in a list before the text item.
_MARK = f"@misi-images-{uuid.uuid4().hex}@"
_MARK_JSON = json.dumps(_MARK).encode() + b","
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Question:
    """One question ready to send: its images (PNG bytes, prompt order) and its text; ``error``
    says why a broken row cannot be sent (it is then reported as failed, not sent)."""

    id: str
    task: str
    question: str
    images: tuple[bytes, ...]
    error: str | None = None


def _is_local(path: str) -> bool:
    folder = Path(os.path.expanduser(path))
    return folder.is_dir() and any(folder.glob("*/*.parquet"))


def _local_fingerprint(folder: Path) -> str:
    """``manifest:<sha>`` of the build's manifest, else ``files:<sha>`` of shard names and sizes."""
    manifest = folder / "manifest.json"
    if manifest.exists():
        return "manifest:" + hashlib.sha256(manifest.read_bytes()).hexdigest()[:16]
    h = hashlib.sha256()
    for shard in sorted(folder.glob("*/*.parquet")):
        h.update(f"{shard.relative_to(folder).as_posix()}:{shard.stat().st_size}\n".encode())
    return "files:" + h.hexdigest()[:16]


class QuestionSource:
    """The questions of one dataset (local folder or Hub repo) at one revision."""

    def __init__(self, dataset: str | None = None, revision: str | None = None):
        dataset = dataset or hub_repo_id()
        self.local = _is_local(dataset)
        if self.local:
            if revision:
                raise MisiError(
                    f"--revision {revision}: {dataset} is a local folder (it has one version); "
                    "--revision picks a tag, branch or commit of a Hub repo"
                )
            self.location = str(Path(os.path.expanduser(dataset)).resolve())
            self.hub_revision = None
            self.revision = _local_fingerprint(Path(self.location))
        else:
            if os.path.exists(os.path.expanduser(dataset)):
                raise MisiError(
                    f"{dataset}: not a dataset folder (no <config>/<split>-*.parquet shards)"
                )
            self.location = dataset
            self.hub_revision = revision or hub_revision()
            self.revision = hub_commit(dataset, self.hub_revision)
        self._hub: dict[str, Path] = {}  # split -> the Hub revision's snapshot folder

    def _shards(self, config: str, split: str) -> list[Path]:
        """The shards of one config and split, checked against the build's manifest; for a Hub
        repo, those of the revision's snapshot in the Hub cache (fetched once per split:
        :func:`..common.local_copy`), so a tag whose manifest disagrees with its shards is
        refused like an edited local shard."""
        if self.local:
            return checked_shards(self.location, config, split)
        if split not in self._hub:
            from ..common import local_copy  # noqa: PLC0415

            self._hub[split], _ = local_copy(self.location, self.revision, (split,))
        return checked_shards(self._hub[split], config, split)

    def _batches(self, config: str, split: str, columns: list[str]) -> Iterator:
        """pyarrow record batches of ``columns`` for one config and split."""
        import pyarrow.parquet as pq  # noqa: PLC0415

        for shard in self._shards(config, split):
            yield from pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=columns)

    def records(self, configs: list[str], split: str) -> list[dict]:
        """Rows for the scorer (id, task, answer, metadata, options) of ``configs``, in order."""
        rows: list[dict] = []
        for config in configs:
            n = len(rows)
            for batch in self._batches(config, split, SCORE_COLUMNS):
                rows.extend(batch.to_pylist())
            if len(rows) == n:
                log.warning("%s: no rows for config %s split %s", self.location, config, split)
        return rows

    def questions(
        self, configs: list[str], split: str, wanted: set[str], images: ImageCache | None = None
    ) -> Iterator[Question]:
        """The questions whose id is in ``wanted``, streamed in dataset order; with ``images``
        (the run's :class:`ImageCache`) questions that show the same view share its bytes."""
        same = bytes if images is None else images.intern
        for config in configs:
            for shard in self._shards(config, split):
                yield from _shard_questions(shard, wanted, same)


def _question(row: dict, images, to_png) -> Question:
    """The question of ``row`` with ``to_png(image, id)`` of each image (its PNG bytes); a row
    whose images cannot be read becomes a question with an error (it then fails alone)."""
    try:
        pngs = tuple(to_png(img, row["id"]) for img in images)
    except (MisiError, OSError, ValueError) as exc:
        return Question(str(row["id"]), str(row["task"]), "", (), error=f"bad row: {exc}")
    return Question(str(row["id"]), str(row["task"]), doc_prompt(row), pngs)


class _Interned:
    """``same(image_png(image, qid))``: a row image's PNG as the run's one bytes object."""

    def __init__(self, same):
        self.same = same

    def __call__(self, image, qid: str) -> bytes:
        return self.same(image_png(image, qid))


class _GroupImages:
    """The PNG of a row group's dictionary entry, read once: ``same`` (the run's
    :meth:`ImageCache.intern`, else ``bytes``) is given the entry's view into the page, which
    the cache copies only for an image it does not hold yet."""

    def __init__(self, values: list, same):
        self.values = values
        self.same = same
        self.read: dict[int, bytes | Exception] = {}

    def __call__(self, index: int | None, qid: str) -> bytes:
        if index is None:
            raise MisiError(f"question {qid}: an image has neither bytes nor a path")
        got = self.read.get(index)
        if got is None:
            view = self.values[index]
            try:
                if view[:8] != _PNG_MAGIC:  # another format: re-encoded (builds never write it)
                    view = image_png(bytes(view), qid)
                got = self.same(view)
            except (MisiError, OSError, ValueError) as exc:
                got = exc
            self.read[index] = got
        if isinstance(got, Exception):
            raise got
        return got


def _shard_questions(shard: Path, wanted: set[str], same) -> Iterator[Question]:
    """The wanted questions of one local shard, one row group at a time. Each distinct image
    of a row group is read once from the image column's dictionary page (:mod:`.pages`) and
    its rows share that one bytes object; a row group laid out otherwise is read by pyarrow."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    pf = pq.ParquetFile(shard, pre_buffer=False)
    column = pages.image_column(pf)
    with open(shard, "rb") as fh:
        fh = _mapped(fh)
        for group in range(pf.num_row_groups):
            columns = ["id", "task", "question", "image_views"]
            text = pf.read_row_group(group, columns, use_threads=False).to_pylist()
            keep = [i for i, row in enumerate(text) if row["id"] in wanted]
            if not keep:
                continue
            try:
                if column is None:
                    raise pages.Unsupported("no image column of the usual schema")
                values, rows = pages.row_group_images(fh, pf, group, column)
                if any(len(r) != len(t["image_views"] or ()) for r, t in zip(rows, text)):
                    raise pages.Unsupported("image counts differ from the rows' image_views")
            except pages.Unsupported as exc:
                log.debug("%s row group %d: %s; read by pyarrow", shard, group, exc)
                table = pf.read_row_group(group, columns=["images"], use_threads=False)
                listed = table.column(0).to_pylist()
                read = _Interned(same)
                for i in keep:
                    yield _question(text[i], listed[i] or [], read)
                continue
            one = _GroupImages(values, same)
            for i in keep:
                yield _question(text[i], rows[i], one)


def _mapped(fh):
    """The open shard ``fh`` mapped read-only (its pages are read where they lie, without a
    copy), or ``fh`` itself where it cannot be mapped. The map is not closed explicitly: the
    views into it that a row group's images may be go away with it."""
    try:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # an empty file, a file system without mmap
        return fh


_ENCODER: list = []


def _b64encode(data: bytes) -> bytes:
    """base64 of ``data`` (ASCII bytes, the standard alphabet, no newlines): ``pybase64``'s
    SIMD encoder when it is installed (the ``eval-fast`` extra; same output, about 50x less
    CPU), else the standard library's."""
    if not _ENCODER:
        try:
            from pybase64 import b64encode  # noqa: PLC0415
        except ImportError:
            b64encode = base64.b64encode
        _ENCODER.append(b64encode)
    return _ENCODER[0](data)


class _Key:
    """A dict key for one PNG that hashes cheaply and compares by content.

    Hashing a whole ~200 KB image (Python's hash of a bytes object) costs about as much as
    base64-encoding it again; the hash here reads the length and the last
    :data:`_KEY_TAIL` bytes (the end of the compressed image data and its checksums, which
    differ between different images), while equality still compares the whole content (the
    same object at once), so two different images never share an entry whatever their hash.
    ``png`` is bytes, or (to look an image up without copying it) a view of bytes such as a
    page's slice: it compares with ``bytes.startswith``, a ``memcmp`` like bytes equality.
    """

    __slots__ = ("png", "_hash")

    def __init__(self, png):
        self.png = png
        self._hash = hash((len(png), bytes(png[-_KEY_TAIL:])))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key):
            return NotImplemented
        a, b = self.png, other.png
        if a is b:
            return True
        if len(a) != len(b):
            return False
        if type(a) is not bytes:
            a, b = b, a
        return a.startswith(b) if type(a) is bytes else bytes(a) == bytes(b)


#: Bytes at the end of a PNG that :class:`_Key` hashes.
_KEY_TAIL = 4096


class ImageCache:
    """Each distinct image of a run once: one bytes object and its base64, keyed by content.

    A dict keyed by the PNG's content (:class:`_Key`: a cheap hash of its length and last
    bytes, equality over the whole content, so two different images never share an entry).
    :meth:`intern` gives rows that show the same view the same bytes object (given a view into
    a page, it copies the image only when the cache does not hold it yet), and :meth:`b64`
    encodes each distinct image once (when a request first shows it); it finds an interned
    object by identity, without hashing. Least recently used entries are dropped beyond
    ``max_bytes`` (PNG plus base64), so memory stays bounded whatever the run's size;
    questions come in dataset order (config, then complex), so the images they share are close
    together.
    """

    def __init__(self, max_bytes: int = 256 * 1024 * 1024):
        self.max_bytes = int(max_bytes)
        self._store: OrderedDict[_Key, list] = OrderedDict()  # key -> [png, b64, key]
        self._by_id: dict[int, list] = {}  # id of an entry's png (alive while it is held)
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def _entry(self, png) -> list:
        entry = self._by_id.get(id(png))  # the run's own bytes object: no hashing, no compare
        if entry is not None and entry[0] is png:
            self.hits += 1
            self._store.move_to_end(entry[2])
            return entry
        key = _Key(png)
        entry = self._store.get(key)
        if entry is not None:
            self.hits += 1
            self._store.move_to_end(entry[2])  # the stored key: found by identity, no compare
            return entry
        self.misses += 1
        if type(png) is not bytes:  # a view: the cache keeps its own copy
            png = key.png = bytes(png)
        entry = [png, None, key]
        self._store[key] = entry
        self._by_id[id(png)] = entry
        self._bytes += len(png)
        self._trim()
        return entry

    def _trim(self) -> None:
        while self._bytes > self.max_bytes and len(self._store) > 1:
            _, (png, b64, _) = self._store.popitem(last=False)
            del self._by_id[id(png)]
            self._bytes -= len(png) + (len(b64) if b64 is not None else 0)

    def intern(self, png) -> bytes:
        """The run's one bytes object with the content of ``png`` (bytes or a view of bytes)."""
        return self._entry(png)[0]

    def b64(self, png) -> bytes:
        """base64 of ``png`` (ASCII bytes), encoded on the first request that shows it."""
        entry = self._entry(png)
        if entry[1] is None:
            entry[1] = _b64encode(entry[0])
            self._bytes += len(entry[1])
            self._trim()
        return entry[1]

    def clear(self) -> None:
        self._store.clear()
        self._by_id.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._store)


def check_configs(configs: list[str] | None) -> list[str]:
    """The task configs to run (default every task), names or aliases, once each; an unknown
    name is one line with a did-you-mean (``core.registry.canonical_task``)."""
    if not configs:
        return list(TASK_NAMES)
    try:
        return canonical_configs(configs)
    except ValueError as exc:
        raise MisiError(f"--configs: {exc}") from None


def image_png(image, qid: str) -> bytes:
    """PNG bytes of one row image (``{"bytes", "path"}`` or bytes); other formats are re-encoded."""
    data = image.get("bytes") if isinstance(image, dict) else image
    if not data and isinstance(image, dict) and image.get("path"):
        data = Path(image["path"]).read_bytes()
    if not data:
        raise MisiError(f"question {qid}: an image has neither bytes nor a readable path")
    if data[:8] == _PNG_MAGIC:
        return bytes(data)
    from PIL import Image  # noqa: PLC0415  (only for non-PNG images, which builds never write)

    buf = io.BytesIO()
    Image.open(io.BytesIO(data)).save(buf, format="PNG")
    return buf.getvalue()


def build_messages(
    q: Question, system: str | None = None, image_urls: list[str] | None = None
) -> list[dict]:
    """Chat messages for one question: an optional system turn, then one user turn holding the
    images (PNG data URLs, prompt order) followed by the question text, as the harnesses show it.
    ``image_urls`` replaces the data URLs (placeholders for :func:`request_body`)."""
    if image_urls is None:
        image_urls = [_DATA_URL + base64.b64encode(p).decode("ascii") for p in q.images]
    content: list[dict] = [{"type": "image_url", "image_url": {"url": url}} for url in image_urls]
    content.append({"type": "text", "text": q.question})
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": content})
    return messages


def request_body(
    q: Question,
    model: str,
    *,
    system: str | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    extra_body: Mapping[str, Any] | None = None,
    images: ImageCache | None = None,
) -> bytes:
    """The JSON body (UTF-8) of one chat-completions request for ``q``; ``extra_body`` fields go in
    at top level and override the others.

    Equal to ``json.dumps`` of the full request (compact separators, ``ensure_ascii=False``), but
    the image items (JSON-safe ASCII) are spliced in as bytes instead of passing through the JSON
    encoder: the request is encoded with one placeholder before its text item, which is replaced
    by the images' items (one join, the only copy of their base64). ``images``: the run's
    :class:`ImageCache` (each distinct image is base64-encoded once per run).
    """
    messages = build_messages(q, system, [])
    if q.images:
        messages[-1]["content"].insert(0, _MARK)
    body: dict[str, Any] = {"model": model, "messages": messages}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    body.update(extra_body or {})
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if not q.images:
        return text
    encode = _b64encode if images is None else images.b64
    at = text.index(_MARK_JSON)
    parts = [text[:at]]
    for png in q.images:  # each image's item: head, base64, tail; the one join copies them
        parts += (_ITEM_HEAD, encode(png), _ITEM_TAIL)
    parts.append(text[at + len(_MARK_JSON) :])
    return b"".join(parts)

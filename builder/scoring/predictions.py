"""Reading prediction files (the model outputs to score) in the shapes people actually have.

Accepted shapes (UTF-8, a byte-order mark is ignored):

* JSON Lines: one object per line with ``id`` and ``prediction`` (MiSI-Bench's own format);
* a JSON list of such objects;
* a JSON object mapping ``id`` to the prediction text;
* lmms-eval ``--log_samples`` files (``<date>_samples_<task>.jsonl``): lines with ``doc_id``
  (the row's position in its config and split) and ``filtered_resps``; their ids are resolved
  against the dataset rows with :func:`resolve_positions` (``target`` must equal the row's gold
  answer, so a file from another split or build is refused); lm-eval's sample logs, which keep
  the row (``doc``), are read by the row's own ``id`` (and its ``config_hash``);
* VLMEvalKit prediction tables (``.xlsx``, ``.tsv``, ``.csv``) with ``id`` and ``prediction``
  columns (the MiSI-Bench VLMEvalKit dataset keeps the row ``id``).

Rules: a ``null`` or absent prediction is *missing* (scored 0 and listed as missing, not read
as an empty answer); when an id appears more than once the last entry wins and the id is
reported in ``duplicate_ids``; entries that are not objects, lack an id or hold a prediction
that is not text are skipped and reported in ``bad_entries``. A file with no usable entry, or
in none of the shapes above, raises :class:`PredictionFileError` with one line saying why; so
does a file whose objects have ids but no ``prediction`` field anywhere (the line names the
fields it found).

Bounds (files from someone else): a file over :data:`MAX_FILE_BYTES`, more than
:data:`MAX_ENTRIES` entries, a JSON Lines line over :data:`MAX_LINE_CHARS`, a table field over
the ``csv`` module's field limit and a workbook beyond the bounds of :mod:`.xlsx` are refused
with one line naming the file and the limit; JSON Lines over :data:`MAX_WHOLE_JSON_BYTES` are
read line by line (never whole), a JSON list that large is refused; JSON nested too deeply for
the parser is an unreadable entry, not a crash.
Reads only the standard library (``.xlsx`` through :mod:`.xlsx`).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import MisiError
from .xlsx import XlsxLimitError, read_xlsx_rows

__all__ = [
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_LINE_CHARS",
    "PredictionFile",
    "PredictionFileError",
    "parse_predictions",
    "read_predictions",
    "resolve_positions",
]

_LMMS_NAME_RE = re.compile(r"_samples_(?:tiny_)?misi_([a-z_]+?)\.jsonl$")
_TABLE_SUFFIXES = (".xlsx", ".tsv", ".csv")

#: One predictions file: the full test split with an eval run's raw replies is ~10-100 MB.
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_LINE_CHARS = 16 * 1024 * 1024  # one JSON Lines entry (a long reasoning trace is ~100 KB)
#: A file parsed as one JSON document (list or object); JSON Lines above this are streamed.
MAX_WHOLE_JSON_BYTES = 64 * 1024 * 1024
#: Entries of one file, readable or not (the whole benchmark has 163,514 questions).
MAX_ENTRIES = 1_000_000


class PredictionFileError(MisiError):
    """A prediction file that cannot be used at all (the message names the file and why)."""


@dataclass(frozen=True)
class PredictionFile:
    """The usable content of one prediction file.

    ``predictions``: question id -> model output text (ids whose prediction is null or absent
    are not in it but in ``no_prediction``); ``shape``: ``jsonl``, ``json-list``, ``json-object``,
    ``lmms-eval-samples`` or ``table``; ``positions``: for lmms-eval samples, row position ->
    (gold answer written in the file, prediction), to resolve with :func:`resolve_positions`;
    ``config``: the task config named by an lmms-eval samples file name, else None;
    ``builds``: the build config hashes its entries record (a ``config_hash`` field, or one in
    the logged row ``doc`` of a harness sample log), if any; ``revision``: the dataset revision
    (release tag, branch or commit) an ``eval`` run recorded it was made on, if known.
    """

    path: str
    shape: str
    predictions: Mapping[str, str]
    no_prediction: tuple[str, ...] = ()
    duplicate_ids: tuple[str, ...] = ()
    bad_entries: tuple[str, ...] = ()
    positions: Mapping[int, tuple[str, str | None]] = field(default_factory=dict)
    config: str | None = None
    builds: tuple[str, ...] = ()
    revision: str | None = None

    @property
    def n_entries(self) -> int:
        return len(self.predictions) + len(self.no_prediction) + len(self.positions)


class _Collector:
    """Accumulates entries in file order (last one wins for an id; duplicates are noted)."""

    def __init__(self, path: str = "<predictions>") -> None:
        self.path, self.entries = path, 0
        self.preds: dict[str, str | None] = {}
        self.duplicates: dict[str, None] = {}
        self.bad: list[str] = []
        self.positions: dict[int, tuple[str, str | None]] = {}
        self.with_field = 0  # objects that have a "prediction" key
        self.keys_seen: list[str] = []  # the keys of the first object with an id
        self.builds: dict[str, None] = {}

    def tick(self) -> None:
        """Count one entry; refused past :data:`MAX_ENTRIES` (one line naming the file)."""
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise PredictionFileError(
                f"{self.path}: more than {MAX_ENTRIES:,} entries, the limit for a predictions "
                "file (the whole benchmark has 163,514 questions)"
            )

    def add(self, where: str, item: Any) -> None:
        self.tick()
        if not isinstance(item, Mapping):
            self.bad.append(f"{where}: not an object ({type(item).__name__})")
            return
        build = item.get("config_hash")
        doc = item.get("doc")  # harness sample logs: the row, with its config_hash column
        if build is None and isinstance(doc, Mapping):
            build = doc.get("config_hash")
        if isinstance(build, str) and build and len(self.builds) < 16:
            self.builds[build] = None
        if "id" not in item and "doc_id" in item:
            self._add_lmms(where, item)
            return
        rid = item.get("id")
        if rid is None or isinstance(rid, (dict, list, bool)) or str(rid).strip() == "":
            self.bad.append(f"{where}: no id")
            return
        if "prediction" in item:
            self.with_field += 1
        elif not self.keys_seen:
            self.keys_seen = [str(k)[:40] for k in list(item)[:12]]
        self.put(where, str(rid).strip(), item.get("prediction"))

    def put(self, where: str, rid: str, value: Any) -> None:
        text = _as_text(value)
        if text is _BAD:
            self.bad.append(
                f"{where}: prediction of {_quoted(rid)} is not text ({type(value).__name__})"
            )
            return
        if rid in self.preds:
            self.duplicates[rid] = None
        self.preds[rid] = text

    def _add_lmms(self, where: str, item: Mapping) -> None:
        pos = item.get("doc_id")
        text = _as_text(item.get("filtered_resps", item.get("resps")))
        doc = item.get("doc")
        rid = doc.get("id") if isinstance(doc, Mapping) else None
        if isinstance(rid, str) and rid.strip() and text is not _BAD:
            self.with_field += 1  # a harness log that keeps the row (lm-eval): its own id
            self.put(where, rid.strip(), text)
            return
        if not isinstance(pos, int) or isinstance(pos, bool) or text is _BAD:
            self.bad.append(f"{where}: unreadable lmms-eval sample")
            return
        if pos in self.positions:
            self.duplicates[f"doc_id {pos}"] = None
        target = item.get("target")
        self.positions[pos] = ("" if target is None else str(target), text)

    def result(self, path: str, shape: str, config: str | None = None) -> PredictionFile:
        if not self.preds and not self.positions:
            first = f" (first problem: {self.bad[0]})" if self.bad else ""
            raise PredictionFileError(f"{path}: no usable prediction in this {shape} file{first}")
        if self.keys_seen and not self.with_field and not self.positions:
            raise PredictionFileError(
                f"{path}: no entry has a 'prediction' field (the first has the fields "
                f"{self.keys_seen}); each entry needs 'id' and 'prediction'"
            )
        if self.positions:
            shape = "lmms-eval-samples"
        return PredictionFile(
            path=path,
            shape=shape,
            predictions={k: v for k, v in self.preds.items() if v is not None},
            no_prediction=tuple(k for k, v in self.preds.items() if v is None),
            duplicate_ids=tuple(self.duplicates),
            bad_entries=tuple(self.bad),
            positions=dict(self.positions),
            config=config,
            builds=tuple(self.builds),
        )


_BAD = object()
#: Characters of a value from the file quoted in a message (every message stays one short line).
QUOTE_CHARS = 80


def _quoted(value: Any, limit: int = QUOTE_CHARS) -> str:
    """``repr`` of a value from the file, cut to ``limit`` characters with its length said."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


def _as_text(value: Any):
    """A prediction value as text; None stays None (missing); _BAD for anything unusable."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return _BAD
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and len(value) == 1:  # lmms-eval / harness response lists
        return _as_text(value[0])
    return _BAD


def parse_predictions(text: str, path: str = "<predictions>") -> PredictionFile:
    """Read prediction file content given as text (JSON Lines, JSON list or JSON object)."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise PredictionFileError(f"{path}: the predictions file is empty")
    match = _LMMS_NAME_RE.search(Path(path).name)
    config = match.group(1) if match else None
    out = _Collector(path)
    stripped = text.strip()
    if stripped[0] in "[{":
        try:
            whole = json.loads(stripped)
        except (ValueError, RecursionError):
            whole = _BAD
        if isinstance(whole, list):
            for i, item in enumerate(whole):
                out.add(f"item {i}", item)
            return out.result(path, "json-list", config)
        if isinstance(whole, dict) and not {"id", "doc_id", "prediction"} & set(whole):
            return _from_object(whole, path, out)
    _add_lines(out, enumerate(text.splitlines(), 1))
    return out.result(path, "jsonl", config)


def _add_lines(out: _Collector, lines, cut: bool = False) -> None:
    """Add the JSON Lines entries of ``lines`` (``(number, line)`` pairs; ``cut``: a line past
    the limit was cut just after it, so its length is not known)."""
    for n, line in lines:
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            size = f"over {MAX_LINE_CHARS}" if cut else str(len(line))
            raise PredictionFileError(
                f"{out.path}: line {n} has {size} characters, over the limit of "
                f"{MAX_LINE_CHARS} for one entry"
            )
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            out.tick()
            out.bad.append(f"line {n}: not JSON")
            continue
        out.add(f"line {n}", item)


def _stream_lines(path: Path):
    """``(number, line)`` of a text file read one bounded line at a time (a line is cut at
    :data:`MAX_LINE_CHARS` + 1 characters, which :func:`_add_lines` refuses)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        n = 0
        while line := fh.readline(MAX_LINE_CHARS + 1):
            n += 1
            yield n, line.rstrip("\r\n")


def _read_streamed(path: Path) -> PredictionFile:
    """A JSON Lines file too large to parse as one document, read line by line (memory: what
    is kept, not the file). A file that starts as a JSON list is refused: it is one document."""
    with path.open("rb") as fh:
        start = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if start == b"[":
        raise PredictionFileError(
            f"{path}: a JSON list of {path.stat().st_size} bytes, over the limit of "
            f"{MAX_WHOLE_JSON_BYTES} bytes for one JSON document; write JSON Lines instead"
        )
    match = _LMMS_NAME_RE.search(path.name)
    out = _Collector(str(path))
    _add_lines(out, _stream_lines(path), cut=True)
    return out.result(str(path), "jsonl", match.group(1) if match else None)


def _from_object(whole: dict, path: str, out: _Collector) -> PredictionFile:
    if "results" in whole and isinstance(whole.get("results"), dict):
        raise PredictionFileError(
            f"{path}: this is a harness results summary, not predictions (for lmms-eval, "
            "pass the *_samples_<task>.jsonl file written with --log_samples)"
        )
    for rid, value in whole.items():
        out.tick()
        out.put(f"key {_quoted(rid)}", str(rid), value)
    return out.result(path, "json-object")


def _read_table(path: Path) -> PredictionFile:
    """A VLMEvalKit prediction table: rows with ``id`` and ``prediction`` columns."""
    if path.suffix.lower() == ".xlsx":
        try:
            rows = [["" if c is None else c for c in row] for row in read_xlsx_rows(path)]
        except XlsxLimitError as exc:
            raise PredictionFileError(f"{path}: refused, {exc}") from None
        except Exception as exc:  # noqa: BLE001 (any damage in the file is one clear error)
            raise PredictionFileError(f"{path}: cannot read this .xlsx file ({exc})") from None
    else:
        rows = _csv_rows(path)
    if not rows:
        raise PredictionFileError(f"{path}: the predictions table is empty")
    header = [str(h).strip() for h in rows[0]]
    if "id" not in header or "prediction" not in header:
        found = ", ".join(_quoted(h) for h in header[:8])
        raise PredictionFileError(
            f"{path}: a predictions table needs 'id' and 'prediction' columns, found [{found}]"
        )
    i_id, i_pred = header.index("id"), header.index("prediction")
    out = _Collector(str(path))
    if "config_hash" in header:  # VLMEvalKit keeps the dataset's columns, this one included
        i_build = header.index("config_hash")
        builds = {str(r[i_build]).strip() for r in rows[1:] if i_build < len(r)} - {""}
        out.builds.update(dict.fromkeys(sorted(builds)[:16]))
    for n, row in enumerate(rows[1:], 2):
        out.tick()
        rid = str(row[i_id]).strip() if i_id < len(row) else ""
        if not rid:
            out.bad.append(f"row {n}: no id")
            continue
        out.put(f"row {n}", rid, str(row[i_pred]) if i_pred < len(row) else None)
    return out.result(str(path), "table")


def _csv_rows(path: Path) -> list[list[str]]:
    """The rows of a ``.csv``/``.tsv`` table, read from the file as a stream (never the whole
    text at once) and refused past :data:`MAX_FILE_BYTES` or :data:`MAX_ENTRIES` rows."""
    _file_size(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    rows: list[list[str]] = []
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            for row in reader:
                if len(rows) > MAX_ENTRIES:
                    raise PredictionFileError(
                        f"{path}: more than {MAX_ENTRIES:,} rows, the limit for a predictions file"
                    )
                rows.append(row)
        except csv.Error as exc:
            raise PredictionFileError(
                f"{path}: cannot read this table at line {reader.line_num} ({exc}; the limit "
                f"is {csv.field_size_limit()} characters per field)"
            ) from None
    return rows


def read_predictions(path: str | Path) -> PredictionFile:
    """Read a prediction file in any accepted shape (see the module docstring); raises
    :class:`PredictionFileError` (a :class:`MisiError`) when the file cannot be used."""
    p = Path(path)
    if not p.exists():
        raise PredictionFileError(f"{path}: cannot read predictions (no such file or folder)")
    try:
        if p.suffix.lower() in _TABLE_SUFFIXES:
            return _read_table(p)
        if _file_size(p) > MAX_WHOLE_JSON_BYTES:
            return _read_streamed(p)
        data = _read_bounded(p)
    except OSError as exc:
        raise PredictionFileError(
            f"{path}: cannot read predictions ({exc.strerror or exc})"
        ) from None
    return parse_predictions(data.decode("utf-8-sig", errors="replace"), str(path))


def _file_size(path: Path) -> int:
    """The size of ``path``, refused (one line naming the limit) over :data:`MAX_FILE_BYTES`."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PredictionFileError(
            f"{path}: {size} bytes, over the limit of {MAX_FILE_BYTES} bytes for a predictions file"
        )
    return size


def _read_bounded(path: Path) -> bytes:
    """The bytes of ``path``, refused (one line naming the limit) beyond :data:`MAX_FILE_BYTES`."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(MAX_FILE_BYTES + 1) if size <= MAX_FILE_BYTES else b""
    if size > MAX_FILE_BYTES:
        raise PredictionFileError(
            f"{path}: {size} bytes, over the limit of {MAX_FILE_BYTES} bytes for a predictions file"
        )
    if len(data) > MAX_FILE_BYTES:
        raise PredictionFileError(
            f"{path}: over the limit of {MAX_FILE_BYTES} bytes for a predictions file"
        )
    return data


def resolve_positions(file: PredictionFile, rows: Sequence[Mapping]) -> PredictionFile:
    """Give an lmms-eval samples file's predictions their question ids: ``rows`` are the dataset
    rows of the file's config and split in dataset order (``doc_id`` is the position). Raises
    :class:`PredictionFileError` when a position is out of range, has no ``target`` (nothing to
    check it by) or its ``target`` is not that row's gold answer (the file belongs to another
    config, split or build)."""
    if not file.positions:
        return file
    preds = dict(file.predictions)
    missing = list(file.no_prediction)
    for pos, (target, text) in sorted(file.positions.items()):
        if pos < 0 or pos >= len(rows):
            raise PredictionFileError(
                f"{file.path}: doc_id {pos} is beyond the {len(rows)} rows of this config"
            )
        row = rows[pos]
        if not target:
            raise PredictionFileError(
                f"{file.path}: doc_id {pos} has no target, so its position cannot be checked "
                f"against row {row['id']} (a log of another split or build would score "
                "silently): log samples with their target, or give predictions with ids"
            )
        if target != str(row["answer"]):
            raise PredictionFileError(
                f"{file.path}: doc_id {pos} has target {target!r} but row {row['id']} "
                f"has answer {row['answer']!r}: wrong config, split or build"
            )
        if text is None:
            missing.append(str(row["id"]))
        else:
            preds[str(row["id"])] = text
    return PredictionFile(
        path=file.path,
        shape=file.shape,
        predictions=preds,
        no_prediction=tuple(missing),
        duplicate_ids=file.duplicate_ids,
        bad_entries=file.bad_entries,
        config=file.config,
        builds=file.builds,
    )

"""Read the cells of an ``.xlsx`` workbook's active sheet with the standard library only (an
``.xlsx`` file is a zip of XML parts), so that the scorer reads VLMEvalKit's prediction tables
without openpyxl. Cell values as openpyxl's read-only rows give them: text, ``int`` or ``float``
for numbers, ``bool`` for booleans, None for an empty cell; a formula cell gives its formula
text (``=...``, as openpyxl without ``data_only``), never its cached value: openpyxl (so pandas
and VLMEvalKit) writes any text that begins with ``=`` as a formula, so the text is the answer.

Why not openpyxl: the scorer is part of the core install (numpy and yaml only, so that every
front-end loads it cheaply); openpyxl comes only with the VLMEvalKit extra. This reader is ~100
lines checked cell for cell against openpyxl (tests/test_predictions.py) and fuzzed.

Bounds (a file from someone else): each part is read only when its declared size is at most
:data:`MAX_PART_BYTES` (the zip module stops at the declared size), and the sheet and shared
strings are parsed as streams, one row at a time; a cell reference beyond Excel's own sheet
(:data:`MAX_ROWS` rows, :data:`MAX_COLUMNS` columns), a row of more than :data:`MAX_COLUMNS`
cells, more than :data:`MAX_CELLS` cells or shared strings, or a sheet whose rectangle would
hold more than :data:`MAX_CELLS` cells is refused before anything is allocated for it (a
242 KB workbook of 62 M empty cells in one row is refused after 16,384 of them); one value (a
cell's text, a shared string, a tag) over :data:`MAX_TOKEN_BYTES` is refused as it streams in
(a 250 MB header cell after 4 MiB). Each refusal is an :class:`XlsxLimitError` naming the limit.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

__all__ = [
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_PART_BYTES",
    "MAX_ROWS",
    "MAX_TOKEN_BYTES",
    "XlsxLimitError",
]

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_REF_RE = re.compile(r"^([A-Z]+)(\d+)$")

MAX_ROWS = 1_048_576  # Excel's own sheet size
MAX_COLUMNS = 16_384
MAX_CELLS = 2_000_000  # rows x widest row: 100,000 questions x 20 columns
MAX_PART_BYTES = 256 * 1024 * 1024  # declared uncompressed size of one XML part
MAX_SMALL_PART_BYTES = 4 * 1024 * 1024  # the workbook and its relations (a few KB in practice)
MAX_CELL_PARTS = 10_000  # elements inside one cell or shared string (rich-text runs)
#: Bytes of one value (a cell's text, a shared string, a tag with its attributes): Excel itself
#: holds at most 32,767 characters in a cell; a long reasoning trace is ~100 KB.
MAX_TOKEN_BYTES = 4 * 1024 * 1024
CHUNK_BYTES = 64 * 1024  # what is read from a part at a time


class XlsxLimitError(ValueError):
    """The workbook is beyond one of this reader's bounds (the message names the limit)."""


def _text(node) -> str:
    """All ``<t>`` text under ``node`` (a shared string or an inline string, rich text joined)."""
    return "".join(t.text or "" for t in node.iter(f"{_MAIN}t"))


def _column(ref: str | None, default: int) -> int:
    m = _REF_RE.match(ref or "")
    index = default + 1
    if m:
        index = 0
        for ch in m.group(1)[:4]:  # four letters are already beyond the last column
            index = index * 26 + ord(ch) - ord("A") + 1
    if index > MAX_COLUMNS:
        raise XlsxLimitError(f"cell {ref} is beyond the {MAX_COLUMNS} columns of a sheet")
    return index - 1


def _number(text: str) -> int | float:
    return float(text) if any(ch in text for ch in ".eE") else int(text)


def _read_part(book: zipfile.ZipFile, name: str) -> bytes:
    """A small part (the workbook, its relations), parsed whole: bounded by
    :data:`MAX_SMALL_PART_BYTES`."""
    size = book.getinfo(name).file_size
    if size > MAX_SMALL_PART_BYTES:
        raise XlsxLimitError(
            f"part {name} unpacks to {size} bytes, over the limit of {MAX_SMALL_PART_BYTES}"
        )
    return book.read(name)


def _active_sheet_path(book: zipfile.ZipFile) -> str:
    workbook = ElementTree.fromstring(_read_part(book, "xl/workbook.xml"))
    sheets = workbook.findall(f"{_MAIN}sheets/{_MAIN}sheet")
    view = workbook.find(f"{_MAIN}bookViews/{_MAIN}workbookView")
    active = int(view.get("activeTab", "0")) if view is not None else 0
    rel_id = sheets[max(0, min(active, len(sheets) - 1))].get(f"{_DOC_REL}id")
    rels = ElementTree.fromstring(_read_part(book, "xl/_rels/workbook.xml.rels"))
    target = next(
        r.get("Target") for r in rels.iter(f"{_PKG_REL}Relationship") if r.get("Id") == rel_id
    )
    return (
        target.lstrip("/")
        if target.startswith("/")
        else posixpath.normpath(posixpath.join("xl", target))
    )


def _cell_value(cell, shared: list[str]):
    kind, value = cell.get("t", "n"), cell.find(f"{_MAIN}v")
    formula = cell.find(f"{_MAIN}f")
    if formula is not None:
        if not formula.text:
            raise ValueError(
                f"cell {cell.get('r', '?')} holds a shared formula without its text (refused: "
                "its answer would be a cached value, not what was written)"
            )
        return "=" + formula.text
    if kind == "inlineStr":
        item = cell.find(f"{_MAIN}is")
        return _text(item) if item is not None else None
    if value is None or value.text is None:
        return None
    if kind == "s":
        return shared[int(value.text)]
    if kind == "b":
        return value.text.strip() == "1"
    if kind in ("str", "e"):
        return value.text
    return _number(value.text)


def _events(stream, name: str):
    """``(event, element)`` of a part read in chunks of :data:`CHUNK_BYTES`; refused once more
    than :data:`MAX_TOKEN_BYTES` arrive without one tag ending or starting (one text, tag or
    attribute that long: a 250 MB header cell is refused after 4 MiB, never held whole)."""
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    quiet = 0
    while chunk := stream.read(CHUNK_BYTES):
        parser.feed(chunk)
        events = list(parser.read_events())
        quiet = 0 if events else quiet + len(chunk)
        if quiet > MAX_TOKEN_BYTES:
            raise XlsxLimitError(
                f"part {name}: one cell, string or tag holds over {MAX_TOKEN_BYTES} bytes, the "
                "limit of one value"
            )
        yield from events
    parser.close()
    yield from parser.read_events()


def _iter_closed(book: zipfile.ZipFile, name: str, tags: tuple[str, ...], keep: str):
    """Each element named in ``tags`` of part ``name``, as its end tag is read (streamed, the
    part never parsed whole). Every finished element is dropped from its parent once seen,
    except inside a ``keep`` element (a cell, a shared string: its value is in its children,
    at most :data:`MAX_CELL_PARTS` of them), so memory holds one row at a time however large
    the part unpacks to, and no value over :data:`MAX_TOKEN_BYTES`."""
    info = book.getinfo(name)
    if info.file_size > MAX_PART_BYTES:
        raise XlsxLimitError(
            f"part {name} unpacks to {info.file_size} bytes, over the limit of {MAX_PART_BYTES}"
        )
    parents: list = []
    inside = held = 0
    with book.open(info) as stream:
        for event, element in _events(stream, name):
            if event == "start":
                parents.append(element)
                if element.tag == keep:
                    inside += 1
                elif inside:
                    held += 1
                    if held > MAX_CELL_PARTS:
                        raise XlsxLimitError(
                            f"part {name}: one {keep.split('}')[-1]} element holds over "
                            f"{MAX_CELL_PARTS} elements, the limit"
                        )
                continue
            parents.pop()
            if element.tag == keep:
                inside, held = inside - 1, 0
            if element.tag in tags:
                yield element
            if not inside and parents:
                parents[-1].remove(element)  # finished: dropped (it is its parent's last child)


def _shared_strings(book: zipfile.ZipFile, names: set[str]) -> list[str]:
    """The shared strings, at most :data:`MAX_CELLS` of them (no sheet can use more)."""
    if "xl/sharedStrings.xml" not in names:
        return []
    shared: list[str] = []
    for si in _iter_closed(book, "xl/sharedStrings.xml", (f"{_MAIN}si",), f"{_MAIN}si"):
        if len(shared) >= MAX_CELLS:
            raise XlsxLimitError(f"more than {MAX_CELLS} shared strings (the limit of cells)")
        shared.append(_text(si))
        si.clear()
    return shared


def _sheet_cells(book: zipfile.ZipFile, sheet: str, shared: list[str]):
    """(row index, {column: value}) of each row, refused as soon as a row has more than
    :data:`MAX_COLUMNS` cells or the sheet more than :data:`MAX_CELLS`, before either is kept."""
    cells: dict[int, object] = {}
    k = total = 0
    for element in _iter_closed(book, sheet, (f"{_MAIN}c", f"{_MAIN}row"), f"{_MAIN}c"):
        if element.tag == f"{_MAIN}c":
            total += 1
            if k >= MAX_COLUMNS:
                raise XlsxLimitError(
                    f"a row holds more than {MAX_COLUMNS} cells, the columns of a sheet"
                )
            if total > MAX_CELLS:
                raise XlsxLimitError(f"the sheet holds over {MAX_CELLS} cells, the limit")
            cells[_column(element.get("r"), k)] = _cell_value(element, shared)
            k += 1
            element.clear()
            continue
        yield element.get("r"), cells
        cells, k = {}, 0
        element.clear()


def read_xlsx_rows(path: str | Path) -> list[list]:
    """The rows of the active sheet, each a list of cell values (None where a cell is empty),
    all as wide as the widest row (as openpyxl's read-only rows are). Raises
    :class:`XlsxLimitError` beyond a bound, and ``zipfile.BadZipFile``, ``KeyError``,
    ``ValueError``, ``IndexError`` or ``ElementTree.ParseError`` for a damaged file. The parts
    are parsed as streams: a bound is found before what is beyond it is held."""
    found: list[tuple[int, dict[int, object]]] = []
    n_rows = width = 0
    with zipfile.ZipFile(path) as book:
        shared = _shared_strings(book, set(book.namelist()))
        for ref, cells in _sheet_cells(book, _active_sheet_path(book), shared):
            index = int(ref if ref is not None else n_rows + 1) - 1
            if not 0 <= index < MAX_ROWS:
                raise XlsxLimitError(f"row {index + 1} is beyond the {MAX_ROWS} rows of a sheet")
            n_rows = max(n_rows + 1, index + 1)
            width = max(width, max(cells) + 1 if cells else 0)
            if n_rows * width > MAX_CELLS:
                raise XlsxLimitError(
                    f"the sheet spans {n_rows} rows x {width} columns, over the limit of "
                    f"{MAX_CELLS} cells"
                )
            found.append((index, cells))
    rows: list[list] = []
    for index, cells in found:
        while len(rows) < index:
            rows.append([None] * width)
        rows.append([cells.get(i) for i in range(width)])
    return rows

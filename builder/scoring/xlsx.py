"""Read the cells of an ``.xlsx`` workbook's active sheet with the standard library only (an
``.xlsx`` file is a zip of XML parts), so that the scorer reads VLMEvalKit's prediction tables
without openpyxl. Cell values as openpyxl gives them: text, ``int`` or ``float`` for numbers,
``bool`` for booleans, None for an empty cell; formulas give their cached value."""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_REF_RE = re.compile(r"^([A-Z]+)(\d+)$")


def _text(node) -> str:
    """All ``<t>`` text under ``node`` (a shared string or an inline string, rich text joined)."""
    return "".join(t.text or "" for t in node.iter(f"{_MAIN}t"))


def _column(ref: str | None, default: int) -> int:
    m = _REF_RE.match(ref or "")
    if not m:
        return default
    index = 0
    for ch in m.group(1):
        index = index * 26 + ord(ch) - ord("A") + 1
    return index - 1


def _number(text: str) -> int | float:
    return float(text) if any(ch in text for ch in ".eE") else int(text)


def _active_sheet_path(book: zipfile.ZipFile) -> str:
    workbook = ElementTree.fromstring(book.read("xl/workbook.xml"))
    sheets = workbook.findall(f"{_MAIN}sheets/{_MAIN}sheet")
    view = workbook.find(f"{_MAIN}bookViews/{_MAIN}workbookView")
    active = int(view.get("activeTab", "0")) if view is not None else 0
    rel_id = sheets[min(active, len(sheets) - 1)].get(f"{_DOC_REL}id")
    rels = ElementTree.fromstring(book.read("xl/_rels/workbook.xml.rels"))
    target = next(
        r.get("Target") for r in rels.iter(f"{_PKG_REL}Relationship") if r.get("Id") == rel_id
    )
    return (
        target.lstrip("/")
        if target.startswith("/")
        else posixpath.normpath(posixpath.join("xl", target))
    )


def read_xlsx_rows(path: str | Path) -> list[list]:
    """The rows of the active sheet, each a list of cell values (None where a cell is empty),
    all as wide as the widest row (as openpyxl's read-only rows are).
    Raises ``zipfile.BadZipFile``, ``KeyError`` or ``ElementTree.ParseError`` for a damaged file."""
    with zipfile.ZipFile(path) as book:
        names = set(book.namelist())
        shared = []
        if "xl/sharedStrings.xml" in names:
            shared = [
                _text(si)
                for si in ElementTree.fromstring(book.read("xl/sharedStrings.xml")).iter(
                    f"{_MAIN}si"
                )
            ]
        sheet = ElementTree.fromstring(book.read(_active_sheet_path(book)))
    rows: list[list] = []
    for row in sheet.iter(f"{_MAIN}row"):
        cells: dict[int, object] = {}
        for k, cell in enumerate(row.iter(f"{_MAIN}c")):
            kind, value = cell.get("t", "n"), cell.find(f"{_MAIN}v")
            if kind == "inlineStr":
                item = cell.find(f"{_MAIN}is")
                content = _text(item) if item is not None else None
            elif value is None or value.text is None:
                content = None
            elif kind == "s":
                content = shared[int(value.text)]
            elif kind == "b":
                content = value.text.strip() == "1"
            elif kind in ("str", "e"):
                content = value.text
            else:
                content = _number(value.text)
            cells[_column(cell.get("r"), k)] = content
        index = int(row.get("r", len(rows) + 1)) - 1
        while len(rows) < index:
            rows.append([])
        rows.append([cells.get(i) for i in range(max(cells) + 1)] if cells else [])
    width = max((len(r) for r in rows), default=0)
    return [r + [None] * (width - len(r)) for r in rows]

"""Reading a dataset card the way a reader's tools do: its YAML front matter with a YAML library,
its sections by heading (fenced code skipped), its markdown tables as rows of cells by header."""

from __future__ import annotations

import re

import yaml

_CELL = re.compile(r"(?<!\\)\|")


def front_matter(text: str) -> tuple[dict, str]:
    """``(metadata, body)``: the YAML between the card's opening ``---`` lines, parsed."""
    assert text.startswith("---\n"), "a Hub card opens with its YAML front matter"
    head, body = text[4:].split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert isinstance(meta, dict)
    return meta, body


def sections(body: str) -> dict[str, str]:
    """``{heading text: the lines under it up to the next heading}`` (any level; headings inside
    fenced code blocks are code, not headings)."""
    out: dict[str, list[str]] = {}
    current, fenced = "", False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            current = line.lstrip("#").strip()
            assert current not in out, f"heading {current!r} twice"
            out[current] = []
        else:
            out.setdefault(current, []).append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def _cells(line: str) -> list[str]:
    parts = _CELL.split(line.strip())
    assert parts[0] == "" and parts[-1] == "", f"a table row starts and ends with |: {line!r}"
    return [p.strip().replace("\\|", "|") for p in parts[1:-1]]


def tables(text: str) -> list[list[dict[str, str]]]:
    """Every markdown table of ``text`` as a list of rows (``{header: cell}``); a row whose cell
    count differs from its header's, or a table without its ``---`` line, fails."""
    found, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            header, rule, *rows = (_cells(b) for b in block)
            assert all(re.fullmatch(r":?-{3,}:?", c) for c in rule), block[:2]
            assert len(rule) == len(header), block[:2]
            for row in rows:
                assert len(row) == len(header), (block[0], row)
            found.append([dict(zip(header, row)) for row in rows])
            block = []
    return found


def table_under(text: str, heading: str, index: int = 0) -> list[dict[str, str]]:
    """The ``index``-th table of the section ``heading``."""
    return tables(sections(front_matter(text)[1])[heading])[index]


def bullets(section: str) -> list[str]:
    """The top-level ``- `` items of a section, each joined into one line."""
    items: list[str] = []
    for line in section.splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items and line.startswith("  "):
            items[-1] += " " + line.strip()
    return items


def bold_titles(items: list[str]) -> list[str]:
    """The ``**bold**`` lead of each item that has one."""
    return [m.group(1) for m in (re.match(r"\*\*(.+?)\*\*", i) for i in items) if m]

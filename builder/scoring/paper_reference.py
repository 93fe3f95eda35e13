"""The paper's published rows (arXiv 2512.10867v2 Table 1, weighted score, and Table 2, exact
match) as reference data, so a report can show a model beside them, and the choice of rows that
``score``, ``report`` and the card print (:func:`select_paper_rows`, ``--paper-rows``).

The figures live in ``paper_reference.yaml`` next to this module (versioned with the package; its
header names the source): every cell as printed, the paper's rank, and a note wherever a printed
average is not the mean of its printed columns. The markdown tables are :mod:`.paper_rows`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.errors import MisiError
from .report import COLUMN_KEYS, PAPER_AVERAGE_COLUMNS

__all__ = [
    "NOT_COMPARABLE",
    "PAPER_REFERENCE_FILE",
    "PAPER_ROWS_HELP",
    "PaperReferenceRow",
    "PaperRowsError",
    "default_paper_rows",
    "paper_reference_rows",
    "paper_row_names",
    "select_paper_rows",
]

PAPER_REFERENCE_FILE = Path(__file__).with_name("paper_reference.yaml")
NOT_COMPARABLE = "not comparable"
#: How far a printed average may lie from the mean of its printed columns before the file must
#: carry a note saying so (the cells are rounded to 0.01, so their mean is good to 0.005).
AVERAGE_TOLERANCE = 0.011
#: ``--paper-rows`` help text (shared by ``score``, ``report`` and the API runner).
PAPER_ROWS_HELP = (
    "the paper's published rows to print beside the result: 'default' (human, the fine-tuned 7B, "
    "the best API model), 'all' (the paper's twelve rows), 'none', or names separated by commas "
    "(e.g. 'human,o3,GPT-4.1'; an unknown name is an error that lists the names)"
)


class PaperRowsError(MisiError, ValueError):
    """An unknown ``--paper-rows`` name (the message lists the names)."""


@dataclass(frozen=True)
class PaperReferenceRow:
    """One published row, scores on the 0-1 scale (None where the paper prints no figure).

    ``scores`` / ``paper_average`` / ``rank``: Table 1 (weighted score); ``exact_scores`` /
    ``exact_average`` / ``exact_rank``: Table 2 (exact match; T9 only on complexes with at least
    one H-bond). Scores are (column key, value) pairs in :data:`~.report.COLUMN_KEYS` order.
    ``printed``: the table's spelling of the name; ``group``: human, fine-tuned, reasoning or
    general; ``questions``: ``tiny`` (MiSI-Bench(tiny), 50 per task) or ``test`` (the test split);
    ``notes``: where a printed figure disagrees with the others."""

    name: str
    description: str
    source: str
    scores: tuple[tuple[str, float | None], ...]
    paper_average: float | None
    rank: int | None = None
    exact_scores: tuple[tuple[str, float | None], ...] = ()
    exact_average: float | None = None
    exact_rank: int | None = None
    printed: str = ""
    aliases: tuple[str, ...] = ()
    group: str = ""
    questions: str = ""
    notes: tuple[str, ...] = ()

    def score(self, column: str) -> float | None:
        """The row's Table 1 score for one column (0-1), None when not printed."""
        return dict(self.scores).get(column)

    def exact(self, column: str) -> float | None:
        """The row's Table 2 exact match for one column (0-1), None when not printed."""
        return dict(self.exact_scores).get(column)

    @property
    def by_column(self) -> dict[str, float | None]:
        """``{column key: Table 1 score or None}`` in the paper's column order."""
        return dict(self.scores)

    @property
    def exact_by_column(self) -> dict[str, float | None]:
        """``{column key: Table 2 exact match or None}`` in the paper's column order."""
        return dict(self.exact_scores)


def _fraction(value, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise ValueError(
            f"{PAPER_REFERENCE_FILE.name}: {where} must be a percentage 0-100 or null, got {value!r}"
        )
    return round(float(value) / 100.0, 6)


def _table(item: dict, key: str, name: str, listed: set[str] | None):
    """(scores, average, rank) of one row's table ``key`` (``weighted`` or ``exact``)."""
    block = item.get(key)
    if block is None and key == "weighted" and "scores" in item:  # version 1 layout
        block = {"scores": item["scores"], "average": item.get("paper_average")}
    if block is None:
        return (), None, None
    raw = block.get("scores") or {}
    if (
        (listed is not None and set(raw) != listed)
        or not set(raw) <= set(COLUMN_KEYS)
        or not set(PAPER_AVERAGE_COLUMNS) <= set(raw)
    ):
        raise ValueError(
            f"{PAPER_REFERENCE_FILE.name}: row {name!r} must list the same columns as the "
            f"first row, among {', '.join(COLUMN_KEYS)} and with {', '.join(PAPER_AVERAGE_COLUMNS)}"
        )
    scores = tuple((col, _fraction(raw.get(col), f"{name}.{key}.{col}")) for col in COLUMN_KEYS)
    average = _fraction(block.get("average"), f"{name}.{key}.average")
    known = [dict(scores)[c] for c in PAPER_AVERAGE_COLUMNS]
    noted = any(
        "average" in str(n) and ("Table 1" if key == "weighted" else "Table 2") in str(n)
        for n in item.get("notes") or ()
    )
    if average is not None and None not in known:
        mean = math.fsum(known) / len(known)
        if abs(mean - average) > AVERAGE_TOLERANCE / 100 and not noted:
            raise ValueError(
                f"{PAPER_REFERENCE_FILE.name}: row {name!r}: its {key} columns average "
                f"{100 * mean:.3f}, not its printed average {100 * average:.2f} (add a note if the "
                "paper prints it so)"
            )
    rank = block.get("rank")
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 1):
        raise ValueError(f"{PAPER_REFERENCE_FILE.name}: {name}.{key}.rank must be >= 1 or null")
    return scores, average, rank


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[PaperReferenceRow, ...], tuple[str, ...]]:
    import yaml

    data = yaml.safe_load(PAPER_REFERENCE_FILE.read_text(encoding="utf-8"))
    source = str(data["source"])
    rows: list[PaperReferenceRow] = []
    first = data["rows"][0] if data["rows"] else {}
    listed = {
        k: set((first.get(k) or {}).get("scores") or {})
        if k in first
        else (set(first["scores"]) if k == "weighted" and "scores" in first else None)
        for k in ("weighted", "exact")
    }
    for item in data["rows"]:
        name = str(item["name"])
        scores, average, rank = _table(item, "weighted", name, listed["weighted"])
        exact, exact_average, exact_rank = _table(item, "exact", name, listed["exact"])
        rows.append(
            PaperReferenceRow(
                name=name,
                description=str(item.get("description", "")),
                source=source,
                scores=scores,
                paper_average=average,
                rank=rank,
                exact_scores=exact,
                exact_average=exact_average,
                exact_rank=exact_rank,
                printed=str(item.get("printed", name)),
                aliases=tuple(str(a) for a in item.get("aliases") or ()),
                group=str(item.get("group", "")),
                questions=str(item.get("questions", "")),
                notes=tuple(str(n) for n in item.get("notes") or ()),
            )
        )
    keys = [_key(r.name) for r in rows]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{PAPER_REFERENCE_FILE.name}: two rows share a name")
    for table in ("rank", "exact_rank"):
        ranks = [getattr(r, table) for r in rows if getattr(r, table) is not None]
        if sorted(ranks) != list(range(1, len(ranks) + 1)):
            raise ValueError(f"{PAPER_REFERENCE_FILE.name}: {table} must number the rows 1..n")
    default = tuple(str(n) for n in data.get("default_rows") or [r.name for r in rows])
    return tuple(rows), default


def paper_reference_rows() -> tuple[PaperReferenceRow, ...]:
    """Every published row (human first, then the paper's Table 1 rank order), 0-1 scale.

    Raises ValueError when the data file is malformed (checked: every row lists the same columns,
    known ones covering the paper's average, values 0-100 or null, a printed average within
    rounding of the mean of its printed columns unless a note says otherwise, ranks 1..n)."""
    return _load()[0]


paper_reference_rows.cache_clear = _load.cache_clear  # type: ignore[attr-defined]


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).casefold())


def paper_row_names() -> tuple[str, ...]:
    """The names ``--paper-rows`` accepts first (each row's name; aliases work too)."""
    return tuple(r.name for r in paper_reference_rows())


def _lookup() -> dict[str, PaperReferenceRow]:
    table: dict[str, PaperReferenceRow] = {}
    for row in paper_reference_rows():
        for text in (row.name, row.printed, *row.aliases):
            table.setdefault(_key(text), row)
    return table


def default_paper_rows() -> tuple[PaperReferenceRow, ...]:
    """The rows shown when nothing is chosen: the human row, the fine-tuned 7B and the best API
    model (the file's ``default_rows``)."""
    return select_paper_rows("default")


def select_paper_rows(spec: str | None) -> tuple[PaperReferenceRow, ...]:
    """The rows ``--paper-rows SPEC`` names: ``default`` (or None), ``all``, ``none``, or names
    and aliases separated by commas, ``default`` and ``all`` among them (case, spaces, dots and
    dashes ignored: ``gpt-4.1``, ``GPT 4.1``), in the order given, each once. Raises :class:`PaperRowsError` naming the
    unknown names and listing the known ones."""
    text = "default" if spec is None else str(spec).strip()
    word = text.casefold()
    if word == "all":
        return paper_reference_rows()
    if word in ("none", ""):
        return ()
    names: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if part.casefold() == "default":
            names += _load()[1]
        elif part.casefold() == "all":
            names += paper_row_names()
        elif part:
            names.append(part)
    table = _lookup()
    unknown = [n for n in names if _key(n) not in table]
    if unknown:
        raise PaperRowsError(
            f"--paper-rows: unknown row {', '.join(repr(n) for n in unknown)}; known rows: "
            f"{', '.join(paper_row_names())} (or all, none, default; aliases such as "
            "'fine-tuned 7B' and 'best API model' work too)"
        )
    out: list[PaperReferenceRow] = []
    for n in names:
        row = table[_key(n)]
        if row not in out:
            out.append(row)
    return tuple(out)

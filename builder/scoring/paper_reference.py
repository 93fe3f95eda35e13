"""The paper's published rows (Table 1 of arXiv 2512.10867) as reference data, so a report can
show a model beside them. The figures live in ``paper_reference.yaml`` next to this module
(versioned with the package; its header names the source); unknown figures are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.profiles import PROFILES
from .report import COLUMN_KEYS, PAPER_AVERAGE_COLUMNS

__all__ = [
    "NOT_COMPARABLE",
    "PAPER_REFERENCE_FILE",
    "PaperReferenceRow",
    "format_paper_rows_markdown",
    "paper_reference_rows",
]

PAPER_REFERENCE_FILE = Path(__file__).with_name("paper_reference.yaml")


@dataclass(frozen=True)
class PaperReferenceRow:
    """One published row. ``scores``: (column key, score) pairs in :data:`~.report.COLUMN_KEYS`
    order: -> score on the 0-1 scale, None where the figure is not known; ``paper_average``: the
    paper's average (0-1)."""

    name: str
    description: str
    source: str
    scores: tuple[tuple[str, float | None], ...]
    paper_average: float | None

    def score(self, column: str) -> float | None:
        """The row's score for one column (0-1), None when unknown."""
        return dict(self.scores).get(column)

    @property
    def by_column(self) -> dict[str, float | None]:
        """``{column key: score or None}`` in the paper's column order."""
        return dict(self.scores)


def _fraction(value, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise ValueError(
            f"{PAPER_REFERENCE_FILE.name}: {where} must be a percentage 0-100 or null, got {value!r}"
        )
    return round(float(value) / 100.0, 6)


@lru_cache(maxsize=1)
def paper_reference_rows() -> tuple[PaperReferenceRow, ...]:
    """The paper's published rows (human, fine-tuned 7B, best API model), scores on a 0-1 scale.

    Raises ValueError when the data file is malformed (checked: every row lists the same columns,
    known ones covering the paper's average, values 0-100 or null, and a row with all eight
    columns known averages to its ``paper_average``). A column no row lists (a task the paper
    does not have) is None.
    """
    import yaml

    data = yaml.safe_load(PAPER_REFERENCE_FILE.read_text(encoding="utf-8"))
    source = str(data["source"])
    rows = []
    listed = set(data["rows"][0]["scores"]) if data["rows"] else set()
    for item in data["rows"]:
        name = str(item["name"])
        raw = item["scores"]
        # every row lists the same columns: the paper's, all known to the registry and covering the
        # paper's average; a task the paper does not have (a newer task) has no column there (None)
        if (
            set(raw) != listed
            or not listed <= set(COLUMN_KEYS)
            or not set(PAPER_AVERAGE_COLUMNS) <= listed
        ):
            raise ValueError(
                f"{PAPER_REFERENCE_FILE.name}: row {name!r} must list the same columns as the "
                f"first row, among {', '.join(COLUMN_KEYS)} and with {', '.join(PAPER_AVERAGE_COLUMNS)}"
            )
        scores = tuple((col, _fraction(raw.get(col), f"{name}.{col}")) for col in COLUMN_KEYS)
        average = _fraction(item.get("paper_average"), f"{name}.paper_average")
        known = [dict(scores)[c] for c in PAPER_AVERAGE_COLUMNS]
        if (
            average is not None
            and None not in known
            and not math.isclose(math.fsum(known) / 8, average, abs_tol=1e-4)
        ):
            raise ValueError(
                f"{PAPER_REFERENCE_FILE.name}: row {name!r}: its columns average "
                f"{math.fsum(known) / 8:.4f}, not its paper_average {average}"
            )
        rows.append(
            PaperReferenceRow(name, str(item.get("description", "")), source, scores, average)
        )
    return tuple(rows)


NOT_COMPARABLE = "not comparable"


def format_paper_rows_markdown(report: dict, profile: str | None) -> str:
    """The paper's published rows beside a report's columns (percent, the paper's scale).

    For a ``paper`` build the rows are headed as the paper's reference; for any other profile
    they are labelled "not comparable" (the questions differ from the paper's: see
    docs/fidelity.md), so nobody reads a gap between them as a model's."""
    comparable = profile in PROFILES and PROFILES[profile].paper_comparable
    columns = report.get("columns") or {}

    def pct(value) -> str:
        return "-" if value is None else f"{100 * value:.2f}"

    head = "| row | " + " | ".join(COLUMN_KEYS) + " | paper avg (8 col) |"
    lines = [head, "|---|" + "---:|" * (len(COLUMN_KEYS) + 1)]
    lines.append(
        "| this result | "
        + " | ".join(pct(columns.get(k)) for k in COLUMN_KEYS)
        + f" | {pct(report.get('paper_average'))} |"
    )
    tag = "" if comparable else f" ({NOT_COMPARABLE})"
    for row in paper_reference_rows():
        lines.append(
            f"| {row.name}{tag} | "
            + " | ".join(pct(row.score(k)) for k in COLUMN_KEYS)
            + f" | {pct(row.paper_average)} |"
        )
    if comparable:
        title = (
            f"The paper's published rows (arXiv 2512.10867 Table 1) beside this {profile!r} build:"
        )
    elif profile in PROFILES:
        title = (
            f"The paper's published rows are {NOT_COMPARABLE} with this {profile!r} build: its questions "
            "differ from the paper's (see docs/fidelity.md); shown for orientation only:"
        )
    else:
        title = (
            f"The paper's published rows are {NOT_COMPARABLE} here: the questions' build profile is not "
            "known (only a 'paper' build asks the paper's questions; see docs/fidelity.md):"
        )
    return title + "\n\n" + "\n".join(lines) + "\n"

"""The paper's rows beside a result, as markdown (``misi-bench score``, the API runner): Table 1
(weighted score) beside the result's scores with the build's blind baselines as rows, and Table 2
(exact match) beside the result's exact figures, T9 counted the paper's way. All in percent, the
paper's scale. The rows themselves (and ``--paper-rows``) are :mod:`.paper_reference`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.profiles import PROFILES
from ..core.registry import TASK_SPECS
from .floors import FLOOR_LABEL, Floor
from .paper_reference import NOT_COMPARABLE, PaperReferenceRow, default_paper_rows
from .readings import HEADLINE_RULE, T9_PAPER_EXACT
from .report import COLUMN_KEYS, paper_average, paper_columns

__all__ = [
    "BASELINE_ROWS",
    "T9_PAPER_EXACT",
    "baseline_columns",
    "format_exact_markdown",
    "format_paper_rows_markdown",
    "format_readings_markdown",
    "paper_exact_columns",
]

#: The blind baselines shown as rows under the paper's rows (key in ``reference_scores``, label).
BASELINE_ROWS = (
    ("text_only", "blind: train's most frequent answer"),
    ("always_no", "blind: constant No / None / A"),
    ("random", "chance: random answer"),
)
_TASK_COLUMN = {s.name: f"T{s.number}" for s in TASK_SPECS if s.halves is None}


def paper_exact_columns(report: Mapping) -> dict[str, float | None]:
    """A report's exact match in the paper's columns, T9 counted the paper's way (complexes with
    at least one H-bond; :data:`T9_PAPER_EXACT`), so it stands beside Table 2."""
    columns = paper_columns(report, "exact")
    t9 = paper_columns(report, T9_PAPER_EXACT).get("T9")
    if "T9" in columns:
        columns["T9"] = t9
    return columns


def baseline_columns(cells: Mapping[str, Mapping]) -> dict[str, float | None]:
    """``{column key: score}`` of one baseline's ``{task: {"score": ...}}`` (0-1); T4's halves
    are None (the baselines are scored per task)."""
    out: dict[str, float | None] = dict.fromkeys(COLUMN_KEYS)
    for task, cell in cells.items():
        col = _TASK_COLUMN.get(task)
        if col is not None and cell and cell.get("score") is not None:
            out[col] = float(cell["score"])
    return out


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _line(label: str, rank, values: Mapping[str, float | None], average) -> str:
    rank_text = "-" if rank is None else str(rank)
    cells = " | ".join(_pct(values.get(k)) for k in COLUMN_KEYS)
    return f"| {label} | {rank_text} | {cells} | {_pct(average)} |"


def _head() -> list[str]:
    return [
        "| row | rank | " + " | ".join(COLUMN_KEYS) + " | paper avg (8 col) |",
        "|---|---:|" + "---:|" * (len(COLUMN_KEYS) + 1),
    ]


def _title(profile: str | None) -> tuple[bool, str]:
    comparable = profile in PROFILES and PROFILES[profile].paper_comparable
    if comparable:
        return True, f"The paper's published rows (arXiv 2512.10867) beside this {profile!r} build"
    if profile in PROFILES:
        return False, (
            f"The paper's published rows are {NOT_COMPARABLE} with this {profile!r} build: its "
            "questions differ from the paper's (see docs/fidelity.md); shown for orientation only"
        )
    return False, (
        f"The paper's published rows are {NOT_COMPARABLE} here: the questions' build profile is not "
        "known (only a 'paper' build asks the paper's questions; see docs/fidelity.md)"
    )


def format_paper_rows_markdown(
    report: dict | None,
    profile: str | None,
    rows: Sequence[PaperReferenceRow] | None = None,
    baselines: Mapping[str, Mapping] | None = None,
    *,
    title: bool = True,
    where: str = "this build",
    floors: Mapping[str, Floor] | None = None,
    floor_where: str | None = None,
) -> str:
    """The chosen paper rows (default :func:`~.paper_reference.default_paper_rows`) beside a
    report, in percent: Table 1 with this result's scores and the blind ``baselines`` (the
    ``reference_scores`` dict of the same questions) as rows, then Table 2 with this result's
    exact match (T9 the paper's way, ours in a note). ``report`` None: the paper's rows and the
    baselines only (the dataset card). Rows are tagged "not comparable" unless the build's
    profile asks the paper's questions; ``title`` False leaves out the heading sentence; ``where``
    names the baselines' questions in their labels; ``floors`` (``{"score": Floor, "exact":
    Floor}``, :mod:`.floors`) adds the blind floor, with its paper average, as a row of each table
    (``floor_where``: its questions, default ``where``).
    Empty text when ``rows`` is empty."""
    rows = default_paper_rows() if rows is None else tuple(rows)
    if not rows:
        return ""
    comparable, heading = _title(profile)
    tag = "" if comparable else f" ({NOT_COMPARABLE})"
    lines = [f"{heading}. " if title else "", "Table 1, weighted score (%):", "", *_head()]
    lines[:2] = ["".join(lines[:2])]
    if report is not None:
        lines.append(
            _line("this result", None, report.get("columns") or {}, report.get("paper_average"))
        )
    for row in rows:
        lines.append(_line(row.name + tag, row.rank, row.by_column, row.paper_average))
    shown = False
    for key, label in BASELINE_ROWS:
        cells = (baselines or {}).get(key)
        if cells:
            values = baseline_columns(cells)
            lines.append(_line(f"{label} ({where})", None, values, paper_average(values)))
            shown = True
    lines += _floor_line((floors or {}).get("score"), floor_where or where)
    if shown or (floors or {}).get("score"):
        lines += [
            "",
            "Blind rows answer without the pictures, on this build's questions (T4 is scored per "
            "task there, so its halves are empty; the blind floor, the best blind baseline of each "
            "column, fills them); a model shows use of the pictures only where it beats them.",
        ]
    exact_rows = [r for r in rows if r.exact_scores]
    if exact_rows:
        lines += [
            "",
            "Table 2 (Appendix B), exact match (%; T9 only on complexes with at least one H-bond):",
            "",
            *_head(),
        ]
        exact = paper_exact_columns(report) if report is not None else None
        if exact is not None:
            lines.append(_line("this result", None, exact, paper_average(exact)))
        for row in exact_rows:
            lines.append(
                _line(row.name + tag, row.exact_rank, row.exact_by_column, row.exact_average)
            )
        lines += _floor_line((floors or {}).get("exact"), floor_where or where)
        if exact is not None:
            ours = paper_columns(report, "exact").get("T9")
            lines += [
                "",
                "T9 exact match of this result, the paper's way (complexes with at least one "
                f"H-bond, App. B): {_pct(exact.get('T9'))}; over every complex (ours): {_pct(ours)}.",
            ]
    notes = [f"- {row.name}: {note}" for row in rows for note in row.notes]
    if notes:
        lines += ["", "Notes on the printed figures:", *notes]
    return "\n".join(lines) + "\n"


def _floor_line(floor: Floor | None, where: str) -> list[str]:
    """The blind floor as a row of a paper table (none without a floor)."""
    if floor is None:
        return []
    return [_line(f"{FLOOR_LABEL} ({where})", None, floor.values, floor.paper_average)]


def format_exact_markdown(
    results: Sequence[tuple[str, Mapping[str, float | None]]],
    rows: Sequence[PaperReferenceRow],
    comparable: bool = True,
) -> str:
    """Exact match (%) of ``results`` (label, :func:`paper_exact_columns` of its report, 0-1)
    beside the Table 2 rows of ``rows`` (``misi-bench report``); empty text when either is
    empty. Rows are tagged "not comparable" unless ``comparable``."""
    exact_rows = [r for r in rows if r.exact_scores]
    if not results or not exact_rows:
        return ""
    tag = "" if comparable else f" ({NOT_COMPARABLE})"
    lines = [
        "Exact match (%) beside the paper's Table 2 (App. B; T9 only on complexes with at least "
        "one H-bond, for the results too):",
        "",
        *_head(),
    ]
    for label, columns in results:
        lines.append(_line(label, None, columns, paper_average(columns)))
    for row in exact_rows:
        lines.append(_line(row.name + tag, row.exact_rank, row.exact_by_column, row.exact_average))
    return "\n".join(lines) + "\n"


def _reading_rows() -> list[tuple[str, str, str]]:
    """(report section, metric of the other reading, the main metric it stands beside), from the
    registry's ``readings`` (a positive-half reading reads the task's positive subset)."""
    return [
        (spec.half_names()[0] if half == "positive" else spec.name, metric, main)
        for spec in TASK_SPECS
        for half, metric, main in spec.readings
    ]


def format_readings_markdown(report: Mapping) -> str:
    """The other readings of rules the paper leaves open beside the headline's reading (percent),
    one line per (task, reading) the report has questions for; empty text when it has none."""
    sections = {**(report.get("tasks") or {}), **(report.get("subsets") or {})}
    headline = f"score_{HEADLINE_RULE.get(report.get('profile'), 'radius')}"
    lines = []
    for name, metric, main in _reading_rows():
        row = sections.get(name) or {}
        if metric in row and main in row and metric != headline:
            lines.append(
                f"| {name} | {metric} | {_pct(row[metric])} | {main} | {_pct(row[main])} |"
            )
    if not lines:
        return ""
    head = [
        "Other readings of rules the paper leaves open (%; the headline keeps our reading, "
        "docs/fidelity.md):",
        "",
        "| task | other reading | % | our reading | % |",
        "|---|---|---:|---|---:|",
    ]
    return "\n".join(head + lines) + "\n"

"""The report's columns, the paper's headline average and the paper's published rows.

Scores here are percentages (0-100), the scale of the paper's Table 1. Columns are the tasks
with T4 split into positives (``T4+``) and negatives (``T4-``), the way the paper reports T4.
The published rows and the paper's average come from the scorer
(:func:`misi_bench.builder.scoring.paper_reference_rows` and
:func:`~misi_bench.builder.scoring.paper_average`), the one place they are defined.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...builder import scoring
from ...builder.core.registry import TASK_SPECS

log = logging.getLogger(__name__)

#: The tasks the paper reports as two halves (T4: positive and negative questions).
_HALVED = tuple(s for s in TASK_SPECS if s.halves is not None)
#: Report columns in the paper's order (T4 as its two halves).
COLUMNS: tuple[str, ...] = tuple(
    col
    for s in TASK_SPECS
    for col in ((f"T{s.number}+", f"T{s.number}-") if s.halves else (f"T{s.number}",))
)
#: Report column -> the scorer's column key (the scorer names T4's halves T4_positive/T4_negative).
SCORER_KEY: dict[str, str] = {
    f"T{s.number}{sign}": f"T{s.number}_{word}"
    for s in _HALVED
    for sign, word in (("+", "positive"), ("-", "negative"))
}
#: The eight columns of the paper's headline average (T5 and T6 left out), from the scorer.
PAPER_AVERAGE_COLUMNS: tuple[str, ...] = tuple(
    {v: k for k, v in SCORER_KEY.items()}.get(key, key) for key in scoring.PAPER_AVERAGE_COLUMNS
)
#: Task config name -> key (``T4`` is residue_ligand as one task: not a report column, but part of
#: the all-task mean; its columns are T4+ and T4-, see T4_SUBSETS).
TASK_COLUMN: dict[str, str] = {s.name: f"T{s.number}" for s in TASK_SPECS}
#: Score-report subset name -> column (``residue_ligand_positive`` -> ``T4+``...).
HALF_SUBSETS: dict[str, str] = {
    sub: f"T{s.number}{sign}" for s in _HALVED for sub, sign in zip(s.half_names(), ("+", "-"))
}
#: Column -> short task name for axis labels and table headers (the registry's labels).
COLUMN_TITLES: dict[str, str] = {}
for _s in TASK_SPECS:
    COLUMN_TITLES[f"T{_s.number}"] = _s.label
    if _s.halves is not None:
        COLUMN_TITLES.update(
            {f"T{_s.number}+": f"{_s.short_label} +", f"T{_s.number}-": f"{_s.short_label} \u2212"}
        )
del _s


def average_all_tasks(scores: Mapping[str, float | None]) -> float | None:
    """Macro mean of the task scores present (T4 as one task), like the scorer's
    ``average_all_tasks``; None when no task is present."""
    return mean_of(scores.get(key) for key in TASK_COLUMN.values())


def complete_average_all(scores: Mapping[str, float | None]) -> float | None:
    """The all-task mean only when every task has a score (a baseline that covers three tasks
    has no all-task average); None otherwise."""
    values = [_number(scores.get(key)) for key in TASK_COLUMN.values()]
    return None if any(v is None for v in values) else mean_of(values)


def paper_average(scores: Mapping[str, float | None]) -> float | None:
    """The paper's headline average: the mean of the eight columns T1, T2, T3, T4+, T4-, T7, T8,
    T9 (same scale as the inputs); None when any of them is missing. The scorer's definition."""
    return scoring.paper_average({SCORER_KEY.get(c, c): _number(scores.get(c)) for c in COLUMNS})


@dataclass(frozen=True)
class ReferenceRow:
    """One published row: ``scores`` column -> percent (None = not published), ``average`` = the
    published headline average, ``source`` = where the figures come from."""

    label: str
    scores: dict[str, float | None] = field(default_factory=dict)
    average: float | None = None
    source: str = ""


_KEY_ALIASES = {
    **{
        f"t{s.number}{tail}": f"T{s.number}{sign}"
        for s in _HALVED
        for sign, tails in (
            ("+", ("_positive", "pos", "_pos", "p")),
            ("-", ("_negative", "neg", "_neg", "n")),
        )
        for tail in tails
    },
    **dict(HALF_SUBSETS),
    **dict(TASK_COLUMN),
}


def column_key(key: object) -> str | None:
    """A report column for a column-ish key (``T4+``, ``t4_positive``, ``rotation``, ``T2``...)."""
    text = str(key).strip()
    if text in COLUMNS:
        return text
    norm = re.sub(r"[\s\-]+", "_", text.lower()).replace("+", "_positive")
    if norm in _KEY_ALIASES:
        return _KEY_ALIASES[norm]
    up = text.upper().replace(" ", "")
    return up if up in COLUMNS else None


def _number(value) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _get(obj, *names, default=None):
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if not isinstance(obj, Mapping) and hasattr(obj, name):
            return getattr(obj, name)
    return default


def _paper_label(name: str) -> str:
    name = name.strip() or "paper row"
    return name if "paper" in name.lower() else f"{name[0].upper()}{name[1:]} (paper)"


def _coerce(row, source: str, factor: float = 1.0) -> ReferenceRow:
    """A :class:`ReferenceRow` (percent) from a mapping or an object with name/scores/average
    fields; ``factor`` converts the input's scale to percent (100 for a 0-1 scale)."""
    raw = _get(row, "scores", "columns", "values", default={}) or {}
    scores = {c: None for c in COLUMNS}
    for key, value in dict(raw).items():
        col = column_key(key)
        number = _number(value)
        if col is not None:
            scores[col] = None if number is None else round(number * factor, 6)
    average = _number(_get(row, "average", "paper_average", "headline_average"))
    return ReferenceRow(
        label=_paper_label(str(_get(row, "label", "name", "model", default=""))),
        scores=scores,
        average=None if average is None else round(average * factor, 6),
        source=str(_get(row, "source", default=source) or source),
    )


def reference_rows(spec: str | None = "default") -> tuple[ReferenceRow, ...]:
    """The paper's published rows that ``--paper-rows SPEC`` names (default: human, the
    fine-tuned 7B, the best API model; ``all``, ``none`` or names), in percent, Table 1, from the
    scorer's reference data (0-1 scale there). An unknown name raises the scorer's
    ``PaperRowsError`` (a MisiError listing the names)."""
    return tuple(
        _coerce(r, f"{r.source} Table 1, rank {r.rank or '-'}", factor=100.0)
        for r in scoring.select_paper_rows(spec)
    )


def mean_of(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are present; None when none is."""
    vals = [v for v in values if v is not None]
    return math.fsum(vals) / len(vals) if vals else None

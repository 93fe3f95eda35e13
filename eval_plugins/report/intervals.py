"""Per-column question counts and 95% intervals of a model's scores (percent).

Every route uses the scorer's one interval method (:mod:`misi_bench.builder.scoring.bootstrap`:
complexes resampled, each statistic recomputed on each resample, percentile interval): on the
per-question scores where the file keeps them (an ``eval`` run's ``report.json`` and a ``score``
JSON, under ``per_item``, whose report's ``intervals`` block is the same computation), else from
the interval block or interval fields a harness result carries (VLMEvalKit's table columns,
``ci95`` of the lmms-eval / lm-eval results written by our adapters). A file with neither (an old
harness file) gets no interval: there is no per-question data to resample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...builder.scoring.bootstrap import (
    HARNESS_BLOCK,
    bootstrap_intervals,
    has_complex,
    items_from_per_item,
)
from .reference import COLUMNS, HALF_SUBSETS, SCORER_KEY, TASK_COLUMN

Interval = tuple[float, float]
#: The key of the headline's interval in a row's ``intervals`` (beside the column keys).
HEADLINE = "paper_average"
__all__ = ["HARNESS_BLOCK", "HEADLINE", "column_intervals", "intervals_of_block", "vlm_intervals"]


def counts_of_aggregate(report: Mapping) -> dict[str, int]:
    """Column -> number of questions, from an aggregate report's ``tasks`` and ``subsets``."""
    out: dict[str, int] = {}
    for task, row in (report.get("tasks") or {}).items():
        if task in TASK_COLUMN and isinstance(row, Mapping) and row.get("n") is not None:
            out[TASK_COLUMN[task]] = int(row["n"])
    for sub, col in HALF_SUBSETS.items():
        row = (report.get("subsets") or {}).get(sub)
        if isinstance(row, Mapping) and row.get("n") is not None:
            out[col] = int(row["n"])
    return out


def _pct(pair) -> Interval:
    return (round(100.0 * float(pair[0]), 2), round(100.0 * float(pair[1]), 2))


def intervals_of_block(block: Mapping | None) -> dict[str, Interval]:
    """Column (and :data:`HEADLINE`) -> interval in percent from a report's ``intervals`` block
    (:func:`misi_bench.builder.scoring.report_intervals`'s JSON)."""
    stats = (block or {}).get("statistics") if isinstance(block, Mapping) else None
    if not isinstance(stats, Mapping):
        return {}
    out = {}
    for col in (*COLUMNS, HEADLINE):
        cell = stats.get(SCORER_KEY.get(col, col))
        ci = cell.get("ci95") if isinstance(cell, Mapping) else None
        if ci and ci[0] is not None:
            out[col] = _pct(ci)
    return out


def column_intervals(per_item: Iterable[Mapping] | None) -> dict[str, Interval]:
    """Column (and :data:`HEADLINE`) -> 95% interval in percent from per-question entries; none
    when they do not name their complexes (files of older versions: no unit to resample)."""
    if not per_item or not all(has_complex(i) for i in per_item):
        return {}
    found = bootstrap_intervals(items_from_per_item(per_item))
    out = {}
    for col in (*COLUMNS, HEADLINE):
        iv = found.get(SCORER_KEY.get(col, col))
        if iv is not None:
            out[col] = _pct((iv.low, iv.high))
    return out


def vlm_intervals(rows: Mapping[str, Mapping]) -> dict[str, Interval]:
    """Column (and the headline) -> interval in percent from a VLMEvalKit ``_acc`` table's
    ``ci95_low`` / ``ci95_high`` columns (0-1; written by our dataset class, absent in older
    tables), ``rows``: the table's rows by their ``task`` cell."""
    stats = {}
    for name, row in rows.items():
        key = HALF_SUBSETS.get(name) or TASK_COLUMN.get(name) or name
        try:
            ci = [float(row["ci95_low"]), float(row["ci95_high"])]
        except (KeyError, TypeError, ValueError):
            continue
        stats[SCORER_KEY.get(key, key)] = {"ci95": ci}
    return intervals_of_block({"statistics": stats})

"""Per-column question counts and 95% intervals of a model's scores (percent).

Every route calls the scorer's one interval function (:func:`misi_bench.builder.scoring.interval`,
the Wilson score interval of the scores' sum, the blind baselines' too): on the per-question
scores where the file keeps them (an ``eval`` run's ``report.json`` and a ``score`` JSON, under
``per_item``), else on the column's mean and count (a harness's results file,
:func:`~misi_bench.builder.scoring.interval_of_mean`), which gives the same interval: the
function depends on the scores only through their mean and count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...builder.core.registry import TASK_BY_NAME
from ...builder.scoring.blind import interval, interval_of_mean
from .reference import HALF_SUBSETS, TASK_COLUMN

Interval = tuple[float, float]


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


def per_column_scores(per_item: Iterable[Mapping]) -> dict[str, list[float]]:
    """Column -> per-question scores (0-1) from a scored run's ``per_item`` list: the scorer's
    items (``metrics``) or the records of ``score --json-out`` (``score`` and ``parts``)."""
    out: dict[str, list[float]] = {}
    for item in per_item:
        spec = TASK_BY_NAME.get(str(item.get("task")))
        metrics = item.get("metrics")
        if not isinstance(metrics, Mapping):
            parts = item.get("parts") if isinstance(item.get("parts"), Mapping) else {}
            metrics = {**parts, "score": item.get("score")}
        if spec is None or metrics.get("score") is None:
            continue
        score = float(metrics["score"])
        out.setdefault(TASK_COLUMN[spec.name], []).append(score)
        if spec.halves is not None and spec.halves in metrics:
            positive, negative = spec.half_names()
            sub = positive if float(metrics[spec.halves]) >= 0.5 else negative
            out.setdefault(HALF_SUBSETS[sub], []).append(score)
    return out


def _pct(pair: Interval) -> Interval:
    return (round(100.0 * pair[0], 2), round(100.0 * pair[1], 2))


def column_intervals(
    scores: Mapping[str, float | None],
    counts: Mapping[str, int],
    per_item: Iterable[Mapping] | None = None,
) -> dict[str, Interval]:
    """Column -> 95% interval in percent, for the columns with a score and a count."""
    if per_item:
        return {
            col: _pct(interval(values))
            for col, values in per_column_scores(per_item).items()
            if values
        }
    out = {}
    for col, n in counts.items():
        value = scores.get(col)
        if value is not None and n > 0:
            out[col] = _pct(interval_of_mean(value / 100.0, n))
    return out

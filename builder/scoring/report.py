"""Aggregation of per-question metrics into reports (:func:`aggregate`), the paper's columns and
average (:data:`PAPER_COLUMNS`, :func:`paper_columns`), record scoring (:func:`score_records`) and
the markdown table (:func:`format_report_markdown`)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..core.profiles import profile_of_metadata
from ..core.registry import HEADLINE_EXCLUDED, TASK_BY_NAME, TASK_NAMES, TASK_SPECS, canonical_task
from .bootstrap import bootstrap_intervals, complex_of, interval_json, items_from_per_item
from .columns import (  # noqa: F401 (COLUMN_KEYS, HALF_SUFFIXES: re-exported, their public home)
    COLUMN_KEYS,
    HALF_SUFFIXES,
    PAPER_AVERAGE_COLUMNS,
    PAPER_COLUMNS,
)
from .metrics import score_prediction
from .parsing import format_parsed, parse_prediction
from .readings import READINGS

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Aggregation and reports
# --------------------------------------------------------------------------------------------

_LEFT_OUT = ", ".join(f"T{TASK_BY_NAME[name].number}" for name in HEADLINE_EXCLUDED) or "none"

#: What each average of a report is (names used in reports, the card and the harness outputs).
AVERAGE_DEFINITIONS = {
    "paper_average": "the paper's Table 1 average: mean of the eight columns T1, T2, T3, T4 positive, "
    "T4 negative, T7, T8, T9 (T5 and T6 left out; None unless all eight have questions)",
    "average_all_tasks": "macro mean of the scores of all tasks (T4 once, positives and negatives "
    "pooled)",
    "average_headline_tasks": "macro mean of the scores of the tasks in the headline, all but "
    f"{_LEFT_OUT} (T4 once, pooled)",
}


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    out: dict[str, float] = {"n": len(rows)}
    for key in keys:
        values = [float(row[key]) for row in rows if key in row]
        out[key] = math.fsum(values) / len(values) if values else float("nan")
    return out


def _mean_or_none(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def paper_columns(report: Mapping, metric: str = "score") -> dict[str, float | None]:
    """``{column key: mean metric}`` of an :func:`aggregate` report in the paper's columns
    (:data:`COLUMN_KEYS`; None where the report has no question for a column), so a model can be
    shown beside :func:`~.paper_reference.paper_reference_rows`."""
    out: dict[str, float | None] = {}
    for key, section, name, _ in PAPER_COLUMNS:
        row = (report.get(section) or {}).get(name)
        value = row.get(metric) if row else None
        out[key] = (
            None
            if value is None or (isinstance(value, float) and math.isnan(value))
            else float(value)
        )
    return out


def paper_average(columns: Mapping[str, float | None]) -> float | None:
    """The paper's average of ``{column key: score}`` (keys of :data:`COLUMN_KEYS`): the mean of
    :data:`PAPER_AVERAGE_COLUMNS`, None when any of them is missing."""
    values = [columns[k] for k in PAPER_AVERAGE_COLUMNS]
    return None if any(v is None for v in values) else math.fsum(values) / len(values)


def aggregate(rows: Iterable[tuple[str, Mapping[str, float]]]) -> dict:
    """Per-task means of every metric and the three averages, all on a 0-1 scale.

    Returns ``{"scale": "0-1", "n": total rows, "tasks": {task: {"n": count, "score": mean,
    "exact": mean, ...}}, "subsets": {"residue_ligand_positive": {...},
    "residue_ligand_negative": {...}}, "columns": the paper's columns (:func:`paper_columns`),
    "paper_average": the paper's average (:data:`PAPER_AVERAGE_COLUMNS`; None unless all eight
    columns have questions), "paper_average_missing": columns without questions,
    "average_all_tasks": macro mean of the main ``score`` over the tasks present,
    "average_headline_tasks": the same over the headline's tasks (not T5/T6), "averages":
    :data:`AVERAGE_DEFINITIONS`}``. Each average is named for what it averages, never for a count of
    tasks, so adding a task renames nothing.
    The two macro averages are None when no task is present. Task names are canonicalised; rows
    of unknown tasks are reported under their own name but left out of the averages.

    >>> r = aggregate([("translation", {"score": 0.5}), ("translation_rotation", {"score": 1.0})])
    >>> r["average_all_tasks"], r["average_headline_tasks"]
    (0.75, 0.5)
    """
    by_task: dict[str, list[dict[str, float]]] = {}
    subsets: dict[str, list[dict[str, float]]] = {
        name: [] for spec in TASK_SPECS if spec.halves is not None for name in spec.half_names()
    }
    n = 0
    for task, metrics in rows:
        try:
            name = canonical_task(task)
        except ValueError:
            logger.warning("aggregate: unknown task %r (left out of the averages)", task)
            name = str(task)
        metrics = dict(metrics)
        by_task.setdefault(name, []).append(metrics)
        spec = TASK_BY_NAME.get(name)
        if spec is not None and spec.halves is not None and spec.halves in metrics:
            positive, negative = spec.half_names()
            subsets[positive if metrics[spec.halves] >= 0.5 else negative].append(metrics)
        n += 1
    order = [t for t in TASK_NAMES if t in by_task] + sorted(
        t for t in by_task if t not in TASK_NAMES
    )
    tasks = {t: _means(by_task[t]) for t in order}
    present = [t for t in TASK_NAMES if t in tasks]
    report = {
        "scale": "0-1",
        "n": n,
        "tasks": tasks,
        "subsets": {k: _means(v) for k, v in subsets.items() if v},
    }
    columns = paper_columns(report)
    report.update(
        {
            "columns": columns,
            "paper_average": paper_average(columns),
            "paper_average_missing": [k for k in PAPER_AVERAGE_COLUMNS if columns[k] is None],
            "average_all_tasks": _mean_or_none([tasks[t]["score"] for t in present]),
            "average_headline_tasks": _mean_or_none(
                [tasks[t]["score"] for t in present if t not in HEADLINE_EXCLUDED]
            ),
            "headline_excluded": list(HEADLINE_EXCLUDED),
            "averages": dict(AVERAGE_DEFINITIONS),
            "readings": dict(READINGS),
        }
    )
    return report


def _fmt_value(value, percent: bool = True) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{100 * value:.2f}" if percent else f"{value:.4f}"


def _fmt_interval(report: Mapping, name: str, percent: bool = True) -> str:
    """The 95% interval of statistic ``name`` (a task, a column key or an average) from the
    report's ``intervals`` block (:func:`report_intervals`); "-" when it has none."""
    block = (report.get("intervals") or {}).get("statistics") or {}
    ci = (block.get(name) or {}).get("ci95")
    if not ci or ci[0] is None:
        return "-"
    return f"[{_fmt_value(ci[0], percent)}, {_fmt_value(ci[1], percent)}]"


#: Report subset name -> its paper column key (T4's halves).
_SUBSET_COLUMN = {name: key for key, section, name, _ in PAPER_COLUMNS if section == "subsets"}


def report_intervals(per_item: Iterable[Mapping]) -> dict:
    """The ``intervals`` block of a report: every task, column and average of the per-question
    entries with its 95% interval by the scorer's one method (:mod:`.bootstrap`)."""
    items = items_from_per_item(per_item)
    return interval_json(bootstrap_intervals(items), len(items.units))


def _average(report: Mapping, name: str) -> float | None:
    """An average of a report by its name."""
    return report.get(name)


def format_report_markdown(report: Mapping, percent: bool = True) -> str:
    """A markdown table of an :func:`aggregate` report: one row per task (T4 positive/negative
    rows after T4), then ``paper_average``, ``average_all_tasks`` and ``average_headline_tasks``;
    columns n, score, exact and the score's 95% interval (the report's ``intervals`` block, the
    scorer's one method: :mod:`.bootstrap`, complexes resampled; "-" without one), in % with two
    decimals as the paper
    prints (every table misi-bench prints is in %; ``percent=False`` gives the report's own 0-1
    scale); a note under the table says what each average is."""
    unit = " %" if percent else ""
    lines = [
        f"| task | n | score{unit} | exact{unit} | 95% interval{unit} |",
        "|---|---:|---:|---:|---:|",
    ]

    def _fmt(value) -> str:
        return _fmt_value(value, percent)

    def _line(name: str, row: Mapping) -> str:
        key = _SUBSET_COLUMN.get(name, name)
        return (
            f"| {name} | {row.get('n', 0)} | {_fmt(row.get('score'))} | {_fmt(row.get('exact'))} "
            f"| {_fmt_interval(report, key, percent)} |"
        )

    tasks = report.get("tasks", {}) or {}
    subsets = report.get("subsets", {}) or {}
    for name, row in tasks.items():
        lines.append(_line(name, row))
        spec = TASK_BY_NAME.get(name)
        if spec is not None and spec.halves is not None:
            for sub in spec.half_names():
                if sub in subsets:
                    lines.append(_line(sub, subsets[sub]))
    present = [t for t in TASK_NAMES if t in tasks]
    headline = [t for t in present if t not in HEADLINE_EXCLUDED]
    exact_columns = paper_columns(report, "exact")
    paper_n = sum(tasks[t].get("n", 0) for t in headline)
    paper_exact = paper_average(exact_columns)
    rows = [
        ("paper_average", paper_n, report.get("paper_average"), paper_exact),
        (
            "average_all_tasks",
            sum(tasks[t].get("n", 0) for t in present),
            _average(report, "average_all_tasks"),
            _mean_or_none([tasks[t]["exact"] for t in present if "exact" in tasks[t]]),
        ),
        (
            "average_headline_tasks",
            paper_n,
            _average(report, "average_headline_tasks"),
            _mean_or_none([tasks[t]["exact"] for t in headline if "exact" in tasks[t]]),
        ),
    ]
    lines += [
        f"| {name} | {n} | {_fmt(score)} | {_fmt(exact)} | {_fmt_interval(report, name, percent)} |"
        for name, n, score, exact in rows
    ]
    lines.append("")
    lines += [f"- {name}: {text}." for name, text in AVERAGE_DEFINITIONS.items()]
    missing = report.get("paper_average_missing") or []
    if missing and tasks:
        lines.append(f"- paper_average is not given: no question for {', '.join(missing)}.")
    return "\n".join(lines) + "\n"


def score_records(records: Iterable[Mapping], predictions: Mapping[str, Any]) -> dict:
    """Score dataset rows (keys ``id``, ``task``, ``answer``, optional ``metadata``/``options``)
    against ``predictions`` (id -> model output). Missing predictions score 0 and are listed.

    Returns ``{"report": aggregate(...), "missing": [ids], "unknown": [prediction ids not in
    the records], "per_item": [{"id", "task", "complex", "answer", "prediction", "parsed",
    "missing", "metrics"}]}``; the report carries ``intervals`` (:func:`report_intervals`). The
    report also names the records' build ``profile`` (None when they mix profiles), so that a
    report shows the paper's rows as comparable only for ``paper`` builds.
    """
    preds = {str(k): v for k, v in dict(predictions).items()}
    seen: set[str] = set()
    missing: list[str] = []
    per_item: list[dict] = []
    rows: list[tuple[str, dict[str, float]]] = []
    profiles: set[str] = set()
    for record in records:
        profiles.add(profile_of_metadata(record.get("metadata")))
        rid = str(record["id"])
        task = canonical_task(record["task"])
        seen.add(rid)
        options = record.get("options")
        options = (
            list(options)
            if isinstance(options, (list, tuple, np.ndarray)) and len(options)
            else None
        )
        has = rid in preds
        if not has:
            missing.append(rid)
        prediction = preds.get(rid)
        metrics = score_prediction(
            task, prediction, record["answer"], record.get("metadata"), options=options
        )
        parsed = parse_prediction(task, prediction, options=options) if has else None
        per_item.append(
            {
                "id": rid,
                "task": task,
                "complex": complex_of(record),
                "answer": record["answer"],
                "prediction": prediction,
                "parsed": format_parsed(task, parsed),
                "missing": not has,
                "metrics": metrics,
            }
        )
        rows.append((task, metrics))
    unknown = sorted(k for k in preds if k not in seen)
    if missing:
        logger.warning(
            "%d of %d questions have no prediction (scored 0)", len(missing), len(per_item)
        )
    if unknown:
        logger.warning("%d predictions do not match any question id", len(unknown))
    report = aggregate(rows)
    report["profile"] = profiles.pop() if len(profiles) == 1 else None
    report["intervals"] = report_intervals(per_item)
    return {"report": report, "missing": missing, "unknown": unknown, "per_item": per_item}

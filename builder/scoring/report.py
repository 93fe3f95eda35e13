"""Aggregation of per-question metrics into reports (:func:`aggregate`), record scoring
(:func:`score_records`) and the markdown table (:func:`format_report_markdown`)."""
from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..core.registry import HEADLINE_EXCLUDED, TASK_NAMES, canonical_task
from .metrics import score_prediction
from .parsing import format_parsed, parse_prediction

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Aggregation and reports
# --------------------------------------------------------------------------------------------

_T4_SUBSETS = ("residue_ligand_positive", "residue_ligand_negative")


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


def aggregate(rows: Iterable[tuple[str, Mapping[str, float]]]) -> dict:
    """Per-task means of every metric and the two macro averages, all on a 0-1 scale.

    Returns ``{"scale": "0-1", "n": total rows, "tasks": {task: {"n": count, "score": mean,
    "exact": mean, ...}}, "subsets": {"residue_ligand_positive": {...},
    "residue_ligand_negative": {...}}, "average_all": macro mean of the main ``score`` over the
    tasks present, "average_headline": the same without HEADLINE_EXCLUDED}``. Averages are None
    when no task is present. Task names are canonicalised; rows of unknown tasks are reported
    under their own name but left out of the averages.
    """
    by_task: dict[str, list[dict[str, float]]] = {}
    subsets: dict[str, list[dict[str, float]]] = {name: [] for name in _T4_SUBSETS}
    n = 0
    for task, metrics in rows:
        try:
            name = canonical_task(task)
        except ValueError:
            logger.warning("aggregate: unknown task %r (left out of the averages)", task)
            name = str(task)
        metrics = dict(metrics)
        by_task.setdefault(name, []).append(metrics)
        if name == "residue_ligand" and "polarity" in metrics:
            subsets[_T4_SUBSETS[0] if metrics["polarity"] >= 0.5 else _T4_SUBSETS[1]].append(metrics)
        n += 1
    order = [t for t in TASK_NAMES if t in by_task] + sorted(t for t in by_task if t not in TASK_NAMES)
    tasks = {t: _means(by_task[t]) for t in order}
    present = [t for t in TASK_NAMES if t in tasks]
    return {
        "scale": "0-1",
        "n": n,
        "tasks": tasks,
        "subsets": {k: _means(v) for k, v in subsets.items() if v},
        "average_all": _mean_or_none([tasks[t]["score"] for t in present]),
        "average_headline": _mean_or_none([tasks[t]["score"] for t in present if t not in HEADLINE_EXCLUDED]),
        "headline_excluded": list(HEADLINE_EXCLUDED),
    }


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}"


def format_report_markdown(report: Mapping) -> str:
    """A markdown table of an :func:`aggregate` report: one row per task (T4 positive/negative
    rows after T4), then both averages; columns n, score, exact (0-1 scale)."""
    lines = ["| task | n | score | exact |", "|---|---:|---:|---:|"]
    tasks = report.get("tasks", {}) or {}
    subsets = report.get("subsets", {}) or {}
    for name, row in tasks.items():
        lines.append(f"| {name} | {row.get('n', 0)} | {_fmt(row.get('score'))} | {_fmt(row.get('exact'))} |")
        if name == "residue_ligand":
            for sub in _T4_SUBSETS:
                if sub in subsets:
                    r = subsets[sub]
                    lines.append(f"| {sub} | {r.get('n', 0)} | {_fmt(r.get('score'))} | {_fmt(r.get('exact'))} |")
    present = [t for t in TASK_NAMES if t in tasks]
    headline = [t for t in present if t not in HEADLINE_EXCLUDED]
    n_all = sum(tasks[t].get("n", 0) for t in present)
    n_head = sum(tasks[t].get("n", 0) for t in headline)
    ex_all = _mean_or_none([tasks[t]["exact"] for t in present if "exact" in tasks[t]])
    ex_head = _mean_or_none([tasks[t]["exact"] for t in headline if "exact" in tasks[t]])
    lines.append(f"| average_all | {n_all} | {_fmt(report.get('average_all'))} | {_fmt(ex_all)} |")
    lines.append(f"| average_headline | {n_head} | {_fmt(report.get('average_headline'))} | {_fmt(ex_head)} |")
    return "\n".join(lines) + "\n"


def score_records(records: Iterable[Mapping], predictions: Mapping[str, Any]) -> dict:
    """Score dataset rows (keys ``id``, ``task``, ``answer``, optional ``metadata``/``options``)
    against ``predictions`` (id -> model output). Missing predictions score 0 and are listed.

    Returns ``{"report": aggregate(...), "missing": [ids], "unknown": [prediction ids not in
    the records], "per_item": [{"id", "task", "answer", "prediction", "parsed", "missing",
    "metrics"}]}``.
    """
    preds = {str(k): v for k, v in dict(predictions).items()}
    seen: set[str] = set()
    missing: list[str] = []
    per_item: list[dict] = []
    rows: list[tuple[str, dict[str, float]]] = []
    for record in records:
        rid = str(record["id"])
        task = canonical_task(record["task"])
        seen.add(rid)
        options = record.get("options")
        options = list(options) if isinstance(options, (list, tuple, np.ndarray)) and len(options) else None
        has = rid in preds
        if not has:
            missing.append(rid)
        prediction = preds.get(rid)
        metrics = score_prediction(task, prediction, record["answer"], record.get("metadata"), options=options)
        parsed = parse_prediction(task, prediction, options=options) if has else None
        per_item.append({
            "id": rid,
            "task": task,
            "answer": record["answer"],
            "prediction": prediction,
            "parsed": format_parsed(task, parsed),
            "missing": not has,
            "metrics": metrics,
        })
        rows.append((task, metrics))
    unknown = sorted(k for k in preds if k not in seen)
    if missing:
        logger.warning("%d of %d questions have no prediction (scored 0)", len(missing), len(per_item))
    if unknown:
        logger.warning("%d predictions do not match any question id", len(unknown))
    return {"report": aggregate(rows), "missing": missing, "unknown": unknown, "per_item": per_item}



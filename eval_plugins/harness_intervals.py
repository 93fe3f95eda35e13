"""The scorer's intervals in the lmms-eval and lm-eval results (their ``stderr`` fields).

Both harnesses give a task's custom aggregation no standard error ("N/A") and a group row the
pooled standard error of its tasks' (independent questions, size-weighted), neither of which is
the benchmark's interval. So the launchers (``misi-bench lmms-eval`` / ``lm-eval``) wrap the
harness's ``simple_evaluate`` (``preflight.run_checked``) and, before the harness prints its table
and writes its results file, put the scorer's own figures into the returned results:

* per MiSI group (``misi``, ``tiny_misi``) ``results["misi_intervals"][split]``: the scorer's
  ``intervals`` block (:func:`misi_bench.builder.scoring.report_intervals`: complexes resampled,
  percentile intervals), the block ``misi-bench score`` writes for the same predictions;
* the group row's ``paper_average_stderr,none``, ``score_stderr,none`` (``average_all_tasks``) and
  ``average_headline_tasks_stderr,none``, and each task row's ``score_stderr,none`` (T4 also
  ``score_positive_stderr`` / ``score_negative_stderr``): the **standard error of the bootstrap
  distribution** of that statistic (its ``se``; the 95% interval itself is in the block).

The per-question scores come from :func:`collect`, called by ``common.score_doc`` (the harness's
``process_results``) in this process. A group is filled only when every one of its tasks has as
many collected questions as the harness counted (``n-samples``); otherwise (several ranks, each
scoring its share, or a test and a tiny run of one task whose questions differ) it is left as the
harness wrote it and one warning says so.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..builder.core.registry import TASK_BY_NAME, TASK_NAMES
from ..builder.scoring import report_intervals
from ..builder.scoring.bootstrap import HARNESS_BLOCK, complex_of

log = logging.getLogger(__name__)

#: Group name -> (task prefix, split).
GROUPS = {"misi": ("misi_", "test"), "tiny_misi": ("tiny_misi_", "tiny")}
#: Group-row metric -> the scorer's statistic.
GROUP_METRICS = {
    "paper_average": "paper_average",
    "score": "average_all_tasks",
    "average_headline_tasks": "average_headline_tasks",
}

_SCORED: dict[tuple[str, str], dict] = {}


def reset() -> None:
    """Forget the collected questions (before a run)."""
    _SCORED.clear()


def collect(doc: Mapping, metrics: Mapping[str, float]) -> None:
    """Keep one scored question of the run in progress (id, task, complex, metrics)."""
    if "id" not in doc:
        return
    entry = {
        "id": str(doc["id"]),
        "task": str(doc["task"]),
        "complex": str(doc.get("pdb_id") or complex_of(doc)),
        "metrics": dict(metrics),
    }
    _SCORED[(entry["task"], entry["id"])] = entry


def _group_items(results: Mapping, prefix: str) -> list[dict] | None:
    """The collected questions of one group, or None unless each task's count matches."""
    rows = results.get("results") or {}
    counts = results.get("n-samples") or {}
    tasks = [t for t in TASK_NAMES if prefix + t in rows]
    if not tasks:
        return None
    items = [e for e in _SCORED.values() if e["task"] in tasks]
    for task in tasks:
        want = (counts.get(prefix + task) or {}).get("effective")
        got = sum(1 for e in items if e["task"] == task)
        if want is None or int(want) != got:
            log.warning(
                "%s%s: %s questions scored in this process, the harness counted %s: no "
                "interval (several ranks? run on one process or score the samples with "
                "misi-bench score)",
                prefix,
                task,
                got,
                want,
            )
            return None
    return items


def _set_stderr(row: dict, metric: str, stats: Mapping, name: str) -> None:
    cell = stats.get(name)
    if isinstance(row, dict) and cell is not None and cell.get("se") is not None:
        row[f"{metric}_stderr,none"] = cell["se"]


def add_intervals(results: object) -> None:
    """Fill the results dict of one harness run in place (see the module docstring)."""
    if not isinstance(results, dict):
        return
    for group, (prefix, split) in GROUPS.items():
        items = _group_items(results, prefix)
        if items is None:
            continue
        block = report_intervals(items)
        results.setdefault(HARNESS_BLOCK, {})[split] = block
        stats = block["statistics"]
        for where in ("results", "groups"):
            row = (results.get(where) or {}).get(group)
            for metric, name in GROUP_METRICS.items():
                _set_stderr(row, metric, stats, name)
        for task in TASK_NAMES:
            row = (results.get("results") or {}).get(prefix + task)
            if row is None:
                continue
            _set_stderr(row, "score", stats, task)
            spec = TASK_BY_NAME[task]
            if spec.in_headline:
                _set_stderr(row, "average_headline_tasks", stats, task)
            if spec.halves is not None:
                for word in ("positive", "negative"):
                    _set_stderr(row, f"score_{word}", stats, f"T{spec.number}_{word}")

"""Blind floors: the best blind baseline of a build per paper column, and a result's margin above
it (docs/decoys.md, "Blind floors").

A score shows use of the pictures only above what an answerer gets without looking at them. The
*floor* of a paper column (T1, T2, T3, T4 positive, T4 negative, T5-T9) is the best mean, on the
same questions, of the baselines that never look at a picture: the random answer, the constant
answer, the train split's most frequent answer (text only) and the options-only rules (T8 on the
option text, T5/T6 the option image rule's letters). The rule is picked per column after seeing
the scores, so the floor is optimistic for the baselines (a high bar). Its paper average is the
mean of the floor's eight headline columns.

A result's *margin* in a column is the mean, over the column's questions, of its score minus the
floor rule's score on the same question (paired); the margin of the paper average is the mean of
the eight column margins. Their 95% intervals are the scorer's one method (:mod:`.bootstrap`) on
the per-question differences: complexes resampled, each statistic recomputed on each resample,
percentile interval; predictions equal to the floor rule's on every question give exactly
0.0 [0.0, 0.0].
The paper's published rows have no per-question results: their margin is a difference of means,
without an interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .blind import fit_text_only
from .bootstrap import bootstrap_intervals, complex_of, items_of
from .columns import column_of
from .question_baselines import (
    RULES,
    QuestionBaselines,
    compute_question_baselines,
)
from .readings import T9_PAPER_EXACT
from .report import COLUMN_KEYS, PAPER_AVERAGE_COLUMNS

__all__ = [
    "FLOOR_LABEL",
    "FLOOR_RULES",
    "Floor",
    "Margin",
    "blind_floor",
    "column_of",
    "floor_from_columns",
    "floor_summary",
    "floors_of",
    "format_floor_markdown",
    "margins",
    "paper_row_margins",
]

#: Every baseline a floor may come from, in the order ties are broken.
FLOOR_RULES = RULES
FLOOR_LABEL = "blind floor: best blind baseline per column"


@dataclass(frozen=True)
class Floor:
    """The floor of one metric (``score`` or ``exact``) on a set of questions: per column its
    value (0-1; None without questions), the baseline it comes from, the question count, and the
    floor rule's per-question values (column -> row id -> value); ``paper_average``: the mean of
    the eight headline columns (None when one is missing)."""

    metric: str
    values: Mapping[str, float | None]
    rules: Mapping[str, str]
    counts: Mapping[str, int]
    items: Mapping[str, Mapping[str, float]]
    paper_average: float | None


@dataclass(frozen=True)
class Margin:
    """A result's margin above a floor in one column (0-1 scale): mean paired difference, its 95%
    interval and the number of questions."""

    value: float
    low: float
    high: float
    n: int


def _column_metric(column: str, metric: str) -> str:
    """The per-question metric a column of ``metric`` reads (T9 exact: the paper's way)."""
    return T9_PAPER_EXACT if metric == "exact" and column == "T9" else metric


def _floor_of(metric: str, table: QuestionBaselines) -> Floor:
    """The floor of ``metric`` from per-question values: per column, the rule with the highest
    mean (``math.fsum``) over the column's questions it answers; ties go to the earlier rule."""
    values: dict[str, float | None] = {}
    rules: dict[str, str] = {}
    counts: dict[str, int] = {}
    items: dict[str, Mapping[str, float]] = {}
    for ci, column in enumerate(COLUMN_KEYS):
        in_column = table.columns == ci
        best = None
        for rule in FLOOR_RULES:
            v = table.value(rule, metric)
            index = np.flatnonzero(in_column & ~np.isnan(v))
            if not index.size:
                continue
            mean = math.fsum(v[index].tolist()) / index.size
            if best is None or mean > best[1]:
                best = (rule, mean, index, v)
        if best is not None:
            rule, mean, index, v = best
            got = dict(zip((table.ids[i] for i in index.tolist()), v[index].tolist()))
            rules[column], values[column], items[column] = rule, mean, MappingProxyType(got)
            counts[column] = len(got)
        else:
            values[column] = None
    heads = [values.get(c) for c in PAPER_AVERAGE_COLUMNS]
    average = None if any(v is None for v in heads) else math.fsum(heads) / len(heads)
    return Floor(
        metric,
        MappingProxyType(values),
        MappingProxyType(rules),
        MappingProxyType(counts),
        MappingProxyType(items),
        average,
    )


def floors_of(table: QuestionBaselines) -> dict[str, Floor]:
    """The floors of ``score`` and ``exact`` from per-question values (a build's stored table,
    or one computed: :mod:`.question_baselines`): ``{"score": Floor, "exact": Floor}``."""
    return {metric: _floor_of(metric, table) for metric in ("score", "exact")}


def floor_from_columns(metric: str, by_rule: Mapping[str, Mapping[str, float | None]]) -> Floor:
    """A floor from each baseline's column means (``{rule: {column: value}}``, 0-1), without
    per-question values (the dataset card's floor, from the baselines it measured)."""
    values: dict[str, float | None] = {}
    rules: dict[str, str] = {}
    for column in COLUMN_KEYS:
        for rule in FLOOR_RULES:
            value = (by_rule.get(rule) or {}).get(column)
            if value is not None and (values.get(column) is None or value > values[column]):
                values[column], rules[column] = float(value), rule
        values.setdefault(column, None)
    heads = [values[c] for c in PAPER_AVERAGE_COLUMNS]
    average = None if any(v is None for v in heads) else math.fsum(heads) / len(heads)
    empty = MappingProxyType({})
    return Floor(metric, MappingProxyType(values), MappingProxyType(rules), empty, empty, average)


def blind_floor(
    rows: Sequence[Mapping],
    train_rows: Sequence[Mapping] | None = None,
    image_answers: Mapping[str, str] | None = None,
    seed: int = 0,
    text_model: Mapping[str, str] | None = None,
) -> dict[str, Floor]:
    """The floors of ``score`` and ``exact`` on ``rows`` (id, task, answer, metadata, options):
    ``{"score": Floor, "exact": Floor}``. Text only needs ``text_model`` or ``train_rows`` (fitted
    on them); T5/T6's options-only rule needs ``image_answers`` (id -> letter)."""
    rows = list(rows)
    if text_model is None and train_rows:
        text_model = fit_text_only(train_rows)
    return floors_of(compute_question_baselines(rows, text_model, image_answers, seed))


def margins(per_item: Iterable[Mapping], floor: Floor) -> dict[str, Margin]:
    """A result's margin above ``floor`` per column and for ``paper_average`` (``per_item``:
    :func:`.report.score_records`' per-question entries, with ``id``, ``task``, ``complex`` and
    ``metrics``, or :func:`.per_item.per_item_records`' ``score`` and ``parts``): the paired
    differences on the questions the floor rule covers, intervals by :mod:`.bootstrap`."""
    ids, tasks, units, cols, diffs = [], [], [], [], []
    for item in per_item:
        metrics = item.get("metrics")
        if not isinstance(metrics, Mapping):
            metrics = {**(item.get("parts") or {}), "score": item.get("score")}
        column = column_of(item["task"], metrics)
        key = _column_metric(column, floor.metric) if column else None
        base = floor.items.get(column, {}).get(str(item["id"])) if column else None
        if base is not None and metrics.get(key) is not None:
            ids.append(str(item["id"]))
            tasks.append(item["task"])
            units.append(complex_of(item))
            cols.append(column)
            diffs.append(float(metrics[key]) - base)
    found = bootstrap_intervals(items_of(ids, tasks, units, cols, diffs))
    return {
        name: Margin(iv.value, iv.low, iv.high, iv.n)
        for name in (*COLUMN_KEYS, "paper_average")
        if (iv := found.get(name)) is not None
    }


def paper_row_margins(values: Mapping[str, float | None], floor: Floor) -> dict[str, float]:
    """A published row's margin above ``floor`` per column (and ``paper_average``): its value
    minus the floor's, where both exist (no interval: the paper gives no per-question results)."""
    out = {
        c: float(values[c]) - float(floor.values[c])
        for c in COLUMN_KEYS
        if values.get(c) is not None and floor.values.get(c) is not None
    }
    if all(c in out for c in PAPER_AVERAGE_COLUMNS):
        out["paper_average"] = math.fsum(out[c] for c in PAPER_AVERAGE_COLUMNS) / len(
            PAPER_AVERAGE_COLUMNS
        )
    return out


def floor_summary(floor: Floor, result_margins: Mapping[str, Margin] | None = None) -> dict:
    """JSON form of a floor (and of a result's margins above it), 0-1 scale."""
    out = {
        "metric": floor.metric,
        "columns": dict(floor.values),
        "rules": dict(floor.rules),
        "n": dict(floor.counts),
        "paper_average": floor.paper_average,
    }
    if result_margins is not None:
        out["margins"] = {
            k: {"margin": m.value, "ci95": [round(m.low, 4), round(m.high, 4)], "n": m.n}
            for k, m in result_margins.items()
        }
    return out


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _margin_cell(m: Margin | None) -> str:
    if m is None:
        return "-"
    return f"{100 * m.value:+.1f} [{100 * m.low:+.1f}, {100 * m.high:+.1f}]"


def format_floor_markdown(
    floor: Floor,
    results: Sequence[tuple[str, Mapping[str, Margin]]] = (),
    paper_rows: Sequence[tuple[str, Mapping[str, float | None]]] = (),
    where: str = "this build",
) -> str:
    """The floor of one metric as a table (percent): the floor row with its paper average, the
    rule of each cell, each result's margin above it with its 95% interval, and each published
    row's margin (``paper_rows``: (label, values by column, 0-1))."""
    what = "weighted score" if floor.metric == "score" else "exact match"
    head = "| row | " + " | ".join(COLUMN_KEYS) + " | paper avg (8 col) |"
    lines = [
        f"Blind floor of {where} ({what}, %): the best blind baseline per column on the same "
        "questions, and the margin above it (points; results: mean paired difference [95% "
        "interval]; published rows: difference of means, no interval):",
        "",
        head,
        "|---|" + "---:|" * (len(COLUMN_KEYS) + 1),
        f"| {FLOOR_LABEL} ({where}) | "
        + " | ".join(_pct(floor.values.get(c)) for c in COLUMN_KEYS)
        + f" | {_pct(floor.paper_average)} |",
        "| floor rule | " + " | ".join(floor.rules.get(c, "-") for c in COLUMN_KEYS) + " | |",
    ]
    for label, result in results:
        cells = [_margin_cell(result.get(c)) for c in (*COLUMN_KEYS, "paper_average")]
        lines.append(f"| {label} minus floor | " + " | ".join(cells) + " |")
    for label, values in paper_rows:
        diff = paper_row_margins(values, floor)
        cells = [
            "-" if c not in diff else f"{100 * diff[c]:+.1f}"
            for c in (*COLUMN_KEYS, "paper_average")
        ]
        lines.append(f"| {label} minus floor | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"

"""A result broken down by factor (``score --by-factor``, ``report``): per task, factor
(:mod:`.factors`) and bin, the question count, the score and its 95% interval, by the scorer's
one interval method (:mod:`.bootstrap`: the bin's questions, their complexes resampled), the
blind floor of the bin where the build has one; two results compared bin by bin (paired
differences on the same resamples, the sign-flip test); and the paper's Fig. 4 panels (T4 exact
match by bond count, T3 error rate by zoom value) beside its published bars.

Inputs are the dataset's rows (``id``, ``task``, ``metadata``: where the factor values are), the
build's per-complex facts (the manifest's ``complex_facts``; empty for a build made before they
were recorded: those factors then give no bin) and per-question entries (``score_records``'
``per_item`` or a result file's ``per_item``, which every route writes). Values are 0-1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..core.registry import TASK_BY_NAME, TASK_NAMES
from .bootstrap import (
    METHOD,
    RESAMPLES,
    SEED,
    UNIT,
    Items,
    complex_of,
    group_intervals,
    items_from_per_item,
    paired,
)
from .factors import Factor, bins_of_row, factors_of, versions
from .paper_reference import PAPER_REFERENCE_FILE

__all__ = [
    "BinCell",
    "bin_table",
    "compare_by_factor",
    "figure4_panels",
    "format_factor_markdown",
    "row_bins",
]

NO_BIN = "no bin"


@dataclass(frozen=True)
class BinCell:
    """One bin of one factor of one task: ``n`` questions from ``complexes`` complexes, the
    statistic's ``value`` and 95% interval (``low``, ``high``), its bootstrap ``se``; ``floor``:
    the build's blind floor on the same questions (None: none); ``p_value``: the paired test's,
    for a comparison of two results (else None)."""

    task: str
    factor: str
    bin: str
    n: int
    complexes: int
    value: float
    low: float
    high: float
    se: float
    floor: float | None = None
    p_value: float | None = None

    def to_json(self) -> dict:
        out = {
            "bin": self.bin,
            "n": self.n,
            "complexes": self.complexes,
            "value": round(self.value, 6),
            "ci95": [round(self.low, 6), round(self.high, 6)],
            "se": round(self.se, 6),
        }
        if self.floor is not None:
            out["floor"] = round(self.floor, 6)
        if self.p_value is not None:
            out["p_value"] = round(self.p_value, 6)
        return out


def row_bins(rows: Iterable[Mapping], facts: Mapping | None = None) -> dict[str, dict[str, str]]:
    """``{question id: {factor key: bin}}`` of the dataset's ``rows`` (questions without a bin
    in a factor are left out of that factor); ``facts``: ``{complex: its facts}``."""
    facts = facts or {}
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        task = str(row.get("task"))
        if task not in TASK_BY_NAME:
            continue
        own = facts.get(complex_of(row)) if facts else None
        found = bins_of_row(task, row.get("metadata"), own)
        out[str(row["id"])] = {k: b for k, b in found.items() if b is not None}
    return out


def _floor_values(floor: object | None) -> dict[str, float]:
    """``{question id: floor value}`` of a ``scoring.floors.Floor`` (any column)."""
    out: dict[str, float] = {}
    for per_id in (getattr(floor, "items", None) or {}).values():
        out.update({str(k): float(v) for k, v in per_id.items()})
    return out


def _groups(items: Items, bins: Mapping[str, Mapping[str, str]]):
    """(partitions, groups): one partition per task and factor (each question's group index in
    it, -1: another task or no bin) and the groups ``(task, factor, bin)`` in task, factor and
    bin order."""
    partitions: list[np.ndarray] = []
    groups: list[tuple[str, Factor, str]] = []
    for t, task in enumerate(TASK_NAMES):
        where = np.flatnonzero(items.task == t)
        if not len(where):
            continue
        own = [bins.get(items.ids[k], {}) for k in where]
        for factor in factors_of(task):
            key = factor.key
            labels = np.array([b.get(key, "") for b in own])
            part = np.full(len(items.ids), -1, dtype=np.int64)
            for label in factor.bins:
                hit = where[labels == label]
                if len(hit):
                    part[hit] = len(groups)
                    groups.append((task, factor, label))
            partitions.append(part)
    return partitions, groups


def _cells(items: Items, bins, resamples: int, seed: int, test: bool, floors=None):
    """The :class:`BinCell` of every group (:func:`_groups`); ``floors``: ``{id: floor}``."""
    partitions, groups = _groups(items, bins)
    found = group_intervals(items, partitions, len(groups), resamples, seed, test)
    masks = _group_masks(partitions, len(groups)) if floors else [None] * len(groups)
    ids = np.asarray(items.ids)
    out = []
    for (task, factor, label), cell, mask in zip(groups, found, masks):
        if cell is None:  # pragma: no cover - every group has questions
            continue
        iv, units, p = cell
        floor = None
        if mask is not None:
            got = [floors.get(i) for i in ids[mask]]
            floor = float(np.mean(got)) if got and None not in got else None
        out.append(
            BinCell(
                task, factor.key, label, iv.n, units, iv.value, iv.low, iv.high, iv.se, floor, p
            )
        )
    return out


def bin_table(
    per_item: Iterable[Mapping],
    bins: Mapping[str, Mapping[str, str]],
    metric: str = "score",
    floor: object | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[BinCell]:
    """Every bin with questions: the mean of ``metric`` and its interval (the result's complexes
    resampled: :func:`.bootstrap.group_intervals`); ``floor``: the build's blind floor
    (``scoring.floors.Floor`` of the same metric) for the bins' floors."""
    items = items_from_per_item(per_item, metric)
    return _cells(items, bins, resamples, seed, False, _floor_values(floor))


def _group_masks(partitions: Sequence[np.ndarray], n_groups: int) -> list:
    """Each group's question mask (groups numbered across the partitions)."""
    masks: list = [None] * n_groups
    for part in partitions:
        for g in np.unique(part[part >= 0]):
            masks[int(g)] = part == g
    return masks


def compare_by_factor(
    per_item_a: Iterable[Mapping],
    per_item_b: Iterable[Mapping],
    bins: Mapping[str, Mapping[str, str]],
    metric: str = "score",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[BinCell]:
    """A - B per bin on the questions both answered (``bootstrap.paired``): the mean paired
    difference, its interval and the sign-flip test's p-value (identical results: exactly 0.0
    [0.0, 0.0], p = 1)."""
    diff = paired(items_from_per_item(per_item_a, metric), items_from_per_item(per_item_b, metric))
    return _cells(diff, bins, resamples, seed, True)


@cache
def figure4_reference() -> tuple[Mapping, ...]:
    """The paper's Fig. 4 panels as ``paper_reference.yaml`` records them (``figure4``)."""
    import yaml  # noqa: PLC0415

    data = yaml.safe_load(PAPER_REFERENCE_FILE.read_text(encoding="utf-8"))
    return tuple((data.get("figure4") or {}).get("panels") or ())


def figure4_panels(
    per_item: Sequence[Mapping],
    bins: Mapping[str, Mapping[str, str]],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[dict]:
    """The paper's Fig. 4 panels from a result: per panel its task, factor, statistic
    (``accuracy``: exact match; ``error_rate``: 1 - exact match, its interval flipped with it) and
    per bin this result's value and interval beside the paper's published bar (percent, None
    where the paper gives none)."""
    out = []
    for panel in figure4_reference():
        task, name = str(panel["task"]), str(panel["factor"])
        key = f"{task}/{name}"
        cells = [
            c
            for c in bin_table(per_item, bins, str(panel["metric"]), None, resamples, seed)
            if c.task == task and c.factor == key
        ]
        error = panel.get("statistic") == "error_rate"
        bars = {str(k): v for k, v in (panel.get("bars") or {}).items()}
        rows = []
        for c in cells:
            value, low, high = (
                (1 - c.value, 1 - c.high, 1 - c.low) if error else (c.value, c.low, c.high)
            )
            rows.append(
                {
                    "bin": c.bin,
                    "n": c.n,
                    "value": round(value, 6),
                    "ci95": [round(low, 6), round(high, 6)],
                    "paper": bars.get(c.bin),
                }
            )
        out.append(
            {
                "task": task,
                "factor": key,
                "statistic": str(panel.get("statistic", "accuracy")),
                "title": str(panel.get("title", key)),
                "paper_model": str(panel.get("model", "")),
                "paper_bars": bars,
                "paper_n": {str(k): v for k, v in (panel.get("n") or {}).items()},
                "paper_note": str(panel.get("note", "")),
                "bins": rows,
            }
        )
    return out


def _factor_labels() -> dict[str, Factor]:
    return {f.key: f for t in TASK_NAMES for f in factors_of(t)}


def by_factor_json(
    cells: Sequence[BinCell], bins: Mapping, metric: str, panels: list | None = None, **extra
) -> dict:
    """The JSON block of a breakdown (``by_factor`` of ``score --json-out``): method, metric,
    the factors' versions and per task and factor its label and bins (percent nowhere: 0-1)."""
    labels = _factor_labels()
    tasks: dict[str, dict] = {}
    for c in cells:
        entry = tasks.setdefault(c.task, {}).setdefault(
            c.factor, {"label": labels[c.factor].label, "bins": []}
        )
        entry["bins"].append(c.to_json())
    out = {
        "metric": metric,
        "method": METHOD,
        "unit": UNIT,
        "resamples": RESAMPLES,
        "seed": SEED,
        "level": 0.95,
        "versions": versions(),
        "questions_with_bins": len(bins),
        "tasks": tasks,
        **extra,
    }
    if panels is not None:
        out["figure4"] = panels
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def format_factor_markdown(cells: Sequence[BinCell], paired_cells: bool = False) -> str:
    """One markdown table per task and factor: bin, n (complexes), value and 95% interval in
    percent, the blind floor where any bin has one (for a comparison: A - B in points and the
    p-value)."""
    labels = _factor_labels()
    floors = not paired_cells and any(c.floor is not None for c in cells)
    lines: list[str] = []
    current = None
    sign = "+" if paired_cells else ""
    for c in cells:
        if (c.task, c.factor) != current:
            current = (c.task, c.factor)
            head = "A - B (points)" if paired_cells else "score %"
            last = " p |" if paired_cells else (" blind floor % |" if floors else "")
            lines += [
                "",
                f"T{TASK_BY_NAME[c.task].number} {c.task}, by {labels[c.factor].label}:",
                "",
                f"| bin | n (complexes) | {head} | 95% interval |{last}",
                "|---|---:|---:|---:|" + ("---:|" if last else ""),
            ]
        tail = ""
        if paired_cells:
            tail = f" {c.p_value:.4f} |"
        elif floors:
            tail = f" {_pct(c.floor)} |"
        lines.append(
            f"| {c.bin} | {c.n} ({c.complexes}) | {100 * c.value:{sign}.2f} | "
            f"[{100 * c.low:{sign}.2f}, {100 * c.high:{sign}.2f}] |{tail}"
        )
    return "\n".join(lines).lstrip("\n") + "\n"


def format_figure4_markdown(panels: Sequence[Mapping]) -> str:
    """The Fig. 4 panels as markdown: per bin this result (n, value, interval) beside the paper's
    published bar of its fine-tuned model."""
    lines = []
    for p in panels:
        what = "error rate" if p["statistic"] == "error_rate" else "exact match"
        lines += [
            "",
            f"{p['title']} ({what} %; paper: {p['paper_model']}):",
            "",
            "| bin | n | this result % | 95% interval | paper % |",
            "|---|---:|---:|---:|---:|",
        ]
        for b in p["bins"]:
            low, high = b["ci95"]
            paper = "-" if b["paper"] is None else f"{b['paper']:.2f}"
            lines.append(
                f"| {b['bin']} | {b['n']} | {100 * b['value']:.2f} | "
                f"[{100 * low:.2f}, {100 * high:.2f}] | {paper} |"
            )
        if p["paper_note"]:
            lines += ["", p["paper_note"]]
    return "\n".join(lines).lstrip("\n") + "\n"


def manifest_facts(manifest: Mapping | None) -> dict:
    """``{complex: facts}`` of a build's manifest (``complex_facts``; empty for a build made
    before they were recorded)."""
    facts = (manifest or {}).get("complex_facts")
    return dict(facts) if isinstance(facts, Mapping) else {}


def score_breakdown(
    rows: Sequence[Mapping],
    per_item: Sequence[Mapping],
    facts: Mapping | None = None,
    floor: object | None = None,
) -> tuple[str, dict]:
    """``score --by-factor``: (markdown, JSON block) of a result's per-question entries on the
    dataset's ``rows``: every factor's bins (score, interval, blind floor) and the paper's Fig. 4
    panels."""
    bins = row_bins(rows, facts)
    cells = bin_table(per_item, bins, "score", floor)
    panels = figure4_panels(per_item, bins)
    text = (
        "By factor (score %, 95% interval: the complexes of the bin resampled):\n\n"
        + format_factor_markdown(cells)
        + "\nThe paper's Fig. 4 panels from this result:\n\n"
        + format_figure4_markdown(panels)
    )
    return text, by_factor_json(cells, bins, "score", panels, facts_recorded=bool(facts))


def chance_by_bin(
    rows: Sequence[Mapping], bins: Mapping[str, Mapping[str, str]], draws: int, seed: int = 11
) -> dict[tuple[str, str, str], float]:
    """Each bin's chance level, ``(task, factor, bin) -> score`` (0-1): the mean over the bin's
    questions of a random answer's expected score, each question's estimated from ``draws``
    random answers (``baselines.baseline_prediction``) drawn from one generator seeded ``seed``
    in the order of ``rows``."""
    from .baselines import baseline_prediction  # noqa: PLC0415
    from .metrics import score_prediction  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    levels: dict[tuple[str, str, str], list[float]] = {}
    for r in rows:
        opts = list(r.get("options") or []) or None
        expected = float(
            np.mean(
                [
                    score_prediction(
                        r["task"],
                        baseline_prediction("random", r["task"], r, rng),
                        r["answer"],
                        r["metadata"],
                        options=opts,
                    )["score"]
                    for _ in range(draws)
                ]
            )
        )
        for key, label in bins.get(r["id"], {}).items():
            levels.setdefault((r["task"], key, label), []).append(expected)
    return {k: float(np.mean(v)) for k, v in levels.items()}

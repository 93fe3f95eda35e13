"""One result against another (``misi-bench compare A B``): per task, per paper column and for
the averages, the paired difference A - B on the questions both answered, its 95% interval and
the p-value of the paired test, all by the scorer's one method (:mod:`.bootstrap`: the same
complex resamples for both results; the test is the complex-level sign-flip permutation test).

A result is a JSON object with per-question entries under ``per_item`` (``misi-bench score
--json-out`` or an ``eval`` run's ``report.json``) and the build it was scored on
(``config_hash``, ``dataset``: ``core.provenance``). Results of different builds or revisions
are refused with one line naming both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.errors import MisiError
from .bootstrap import (
    RESAMPLES,
    SEED,
    STATISTICS,
    bootstrap_intervals,
    has_complex,
    interval_json,
    items_from_per_item,
    paired,
    paired_test,
    point_values,
)

__all__ = ["Comparison", "compare_results", "format_comparison_markdown", "same_build"]


@dataclass(frozen=True)
class Comparison:
    """A - B: ``values_a`` / ``values_b``: each result's statistics on the shared questions
    (0-1); ``difference``: :func:`.bootstrap.interval_json` of the paired differences with
    p-values; ``questions``: shared (answered by both) questions; ``left_out``: questions of
    either result not shared."""

    label_a: str
    label_b: str
    values_a: Mapping[str, float]
    values_b: Mapping[str, float]
    difference: Mapping
    questions: int
    left_out: int

    def to_json(self) -> dict:
        """The JSON form (0-1 scale)."""
        return {
            "a": self.label_a,
            "b": self.label_b,
            "values_a": dict(self.values_a),
            "values_b": dict(self.values_b),
            "difference": dict(self.difference),
            "questions": self.questions,
            "left_out": self.left_out,
        }


def _build_of(result: Mapping) -> tuple[str | None, str | None, str]:
    """(config hash, revision or commit, label) of the build a result was scored on."""
    dataset = result.get("dataset") if isinstance(result.get("dataset"), Mapping) else {}
    build = result.get("config_hash") or dataset.get("config_hash")
    at = dataset.get("commit") or dataset.get("revision")
    where = str(dataset.get("dataset") or "?") + (f"@{at}" if at else "")
    return (str(build) if build else None), (str(at) if at else None), where


def same_build(a: Mapping, b: Mapping, label_a: str, label_b: str) -> None:
    """Raise MisiError (one line naming both) unless ``a`` and ``b`` were scored on the same
    build (same ``config_hash``, both recorded) and, where both name one, the same revision."""
    hash_a, at_a, where_a = _build_of(a)
    hash_b, at_b, where_b = _build_of(b)
    if hash_a is None or hash_b is None or hash_a != hash_b or (at_a and at_b and at_a != at_b):
        raise MisiError(
            f"cannot compare: {label_a} is build {hash_a or 'not recorded'} ({where_a}), "
            f"{label_b} is build {hash_b or 'not recorded'} ({where_b}); compare results "
            "scored on one build and revision"
        )


def _answered(result: Mapping, label: str) -> list[Mapping]:
    items = result.get("per_item")
    if not isinstance(items, list) or not items:
        raise MisiError(
            f"{label}: no per-question results (per_item); compare needs `misi-bench score "
            "--json-out` or an eval run's report.json"
        )
    answered = [i for i in items if isinstance(i, Mapping) and not i.get("missing")]
    if not all(has_complex(i) for i in answered):
        raise MisiError(
            f"{label}: its per-question results do not name their complex (written by an older "
            "version): score the predictions again"
        )
    return answered


def compare_results(
    a: Mapping,
    b: Mapping,
    label_a: str = "A",
    label_b: str = "B",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Comparison:
    """The paired comparison of two results (see the module docstring); MisiError when they
    come from different builds, lack per-question results or share no answered question."""
    same_build(a, b, label_a, label_b)
    items_a = items_from_per_item(_answered(a, label_a))
    items_b = items_from_per_item(_answered(b, label_b))
    diff = paired(items_a, items_b)
    if not diff.ids:
        raise MisiError(f"{label_a} and {label_b} share no answered question")
    shared = set(diff.ids)
    values_a = point_values(items_a, shared)
    values_b = point_values(items_b, shared)
    found = bootstrap_intervals(diff, resamples, seed)
    p_values = paired_test(diff, resamples, seed)
    left_out = len(items_a.ids) + len(items_b.ids) - 2 * len(shared)
    return Comparison(
        label_a,
        label_b,
        values_a,
        values_b,
        interval_json(found, len(diff.units), resamples, seed, p_values),
        len(shared),
        left_out,
    )


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def format_comparison_markdown(comparison: Comparison) -> str:
    """The comparison as a markdown table (percent): one row per statistic with a difference,
    A and B on the shared questions, A - B with its 95% interval, the p-value and n."""
    diff = comparison.difference
    lines = [
        f"A = {comparison.label_a}, B = {comparison.label_b}: {comparison.questions} questions "
        f"answered by both ({comparison.left_out} others left out), {diff['complexes']} complexes; "
        f"intervals: {diff['method']}, {diff['resamples']} resamples, seed {diff['seed']}; "
        f"p: {diff['test']}.",
        "",
        "| statistic | n | A % | B % | A - B (points) | 95% interval | p |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in STATISTICS:
        cell = diff["statistics"].get(name)
        if cell is None:
            continue
        low, high = cell["ci95"]
        lines.append(
            f"| {name} | {cell['n']} | {_pct(comparison.values_a.get(name))} | "
            f"{_pct(comparison.values_b.get(name))} | {100 * cell['value']:+.2f} | "
            f"[{100 * low:+.2f}, {100 * high:+.2f}] | {cell['p_value']:.4f} |"
        )
    return "\n".join(lines) + "\n"

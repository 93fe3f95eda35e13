"""THE interval method of every figure misi-bench prints: a bootstrap over complexes.

One complex gives several questions (T4 one per pocket residue, T8 up to three bonds, T1-T7 two
to six), and they are correlated, so the resampling unit is the **complex** (the row's
``metadata.pdb_id``): a resample draws as many complexes as the questions come from, with
replacement, and takes all questions of each drawn complex. On each resample every statistic is
computed exactly as on the data (per task and per paper column: sum of scores over count;
``paper_average``: mean of the eight column means; ``average_all_tasks`` /
``average_headline_tasks``: mean of the task means, over the tasks present in the data), so an
interval never leaves what the statistic can reach (a mean of 0-1 scores stays in [0, 1], a
difference in [-1, 1]). The interval is the **percentile** interval (2.5th and 97.5th
percentiles of :data:`RESAMPLES` resamples, numpy's linear interpolation); ``se`` is the
standard deviation of the resampled statistic (ddof 1), what the harness adapters report as a
standard error. A resample without a question of some task or column gives no value for the
statistics that need one (left out of that statistic's percentiles; only possible for columns
with questions from a handful of complexes).

Paired figures (a result minus the blind floor, one result minus another) are the same
statistics of the per-question differences on the questions both have, on the same resamples:
identical per-question scores give exactly 0.0 [0.0, 0.0]. The resamples depend only on the
sorted complex ids, :data:`RESAMPLES` and :data:`SEED` (a numpy ``Generator``), never on input
order or process count: questions are sorted by (complex, id) before any sum. The paired test of
:func:`paired_test` is a complex-level sign-flip permutation test (two-sided; :data:`TEST`).

Cost (``scripts/bench_intervals.py``): per-complex sums per task and column (``bincount``), then
a (resamples x complexes) matrix of draw counts, in blocks of :data:`BLOCK` resamples, times the
(complexes x groups) sums: no Python loop over questions or resamples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.registry import HEADLINE_EXCLUDED, TASK_BY_NAME, TASK_NAMES, canonical_task
from .columns import COLUMN_KEYS, PAPER_AVERAGE_COLUMNS, column_of

__all__ = [
    "AVERAGES",
    "METHOD",
    "RESAMPLES",
    "SEED",
    "TEST",
    "UNIT",
    "Interval",
    "Items",
    "bootstrap_intervals",
    "complex_of",
    "group_intervals",
    "has_complex",
    "interval_json",
    "items_from_per_item",
    "items_of",
    "paired",
    "paired_test",
    "point_values",
]

METHOD = "percentile bootstrap over complexes"
UNIT = "complex (metadata pdb_id): a complex's questions are resampled together"
TEST = "complex-level sign-flip permutation test, two-sided"
RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
BLOCK = 250
AVERAGES = ("paper_average", "average_all_tasks", "average_headline_tasks")
#: Key of the intervals blocks the launchers add to a harness's results (split -> block).
HARNESS_BLOCK = "misi_intervals"
#: Statistic names, in order: the nine tasks, the ten paper columns, the three averages.
STATISTICS: tuple[str, ...] = (*TASK_NAMES, *COLUMN_KEYS, *AVERAGES)
_NT, _NC = len(TASK_NAMES), len(COLUMN_KEYS)
_HEADLINE = np.array([t not in HEADLINE_EXCLUDED for t in TASK_NAMES])
_PAPER = np.array([c in PAPER_AVERAGE_COLUMNS for c in COLUMN_KEYS])


def has_complex(record: Mapping) -> bool:
    """Whether a record names its complex (a ``complex`` field or metadata): per-question
    records written before the intervals resampled complexes do not."""
    return bool(record.get("complex") or record.get("metadata"))


def complex_of(record: Mapping) -> str:
    """The resampling unit of a dataset row or per-question record: its ``complex`` field, else
    its metadata's ``pdb_id``, else (a row without one) its own id."""
    if record.get("complex"):
        return str(record["complex"])
    meta = record.get("metadata")
    if isinstance(meta, (str, bytes)) and meta:
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if isinstance(meta, Mapping) and meta.get("pdb_id"):
        return str(meta["pdb_id"])
    return str(record["id"])


@dataclass(frozen=True)
class Items:
    """Per-question values of one result (or of a paired difference), sorted by (complex, id):
    ``ids``; ``unit``: index into ``units`` (sorted complex ids); ``task``: index into
    ``TASK_NAMES``; ``column``: index into ``COLUMN_KEYS`` (-1: none); ``value``: score (0-1)
    or difference (-1 to 1)."""

    ids: tuple[str, ...]
    units: tuple[str, ...]
    unit: np.ndarray
    task: np.ndarray
    column: np.ndarray
    value: np.ndarray


def items_of(
    ids: Sequence[str],
    tasks: Sequence[str],
    complexes: Sequence[str],
    columns: Sequence[str | None],
    values: Sequence[float],
) -> Items:
    """:class:`Items` from parallel lists (any order; tasks by name or alias, columns by key)."""
    if not len(ids):
        empty = np.zeros(0, dtype=np.int64)
        return Items((), (), empty, empty, empty, np.zeros(0))
    id_arr = np.asarray([str(i) for i in ids])
    unit_names, unit = np.unique(np.asarray([str(c) for c in complexes]), return_inverse=True)
    order = np.lexsort((id_arr, unit))
    task_names, task = np.unique(np.asarray([str(t) for t in tasks]), return_inverse=True)
    task_index = {t: k for k, t in enumerate(TASK_NAMES)}
    task_code = np.array([task_index[canonical_task(t)] for t in task_names], dtype=np.int64)
    col_names, col = np.unique(
        np.asarray(["" if c is None else c for c in columns]), return_inverse=True
    )
    col_index = {c: k for k, c in enumerate(COLUMN_KEYS)}
    col_code = np.array([col_index.get(c, -1) for c in col_names], dtype=np.int64)
    return Items(
        tuple(id_arr[order].tolist()),
        tuple(unit_names.tolist()),
        unit.astype(np.int64)[order],
        task_code[task][order],
        col_code[col][order],
        np.asarray(values, dtype=np.float64)[order],
    )


def _metrics_of(item: Mapping) -> dict:
    """The metrics of a per-question entry: the scorer's (``metrics``) or a ``per_item``
    record's (``score`` and ``parts``)."""
    metrics = item.get("metrics")
    if isinstance(metrics, Mapping):
        return dict(metrics)
    parts = item.get("parts") if isinstance(item.get("parts"), Mapping) else {}
    return {**parts, "score": item.get("score")}


def items_from_per_item(per_item: Iterable[Mapping], metric: str = "score") -> Items:
    """:class:`Items` of ``metric`` from per-question entries (``score_records``' ``per_item``
    or :func:`.per_item.per_item_records`: ``id``, ``task``, ``complex``, the metrics); entries
    of unknown tasks or without the metric are left out."""
    ids, tasks, units, cols, values = [], [], [], [], []
    known = set(TASK_NAMES)
    column = {}  # (task, half) -> column key: one lookup per kind of question
    for item in per_item:
        metrics = _metrics_of(item)
        task = str(item.get("task"))
        if metrics.get(metric) is None or task not in known:
            continue
        halves = TASK_BY_NAME[task].halves  # T4: its polarity picks the column
        key = (task, None if halves not in metrics else float(metrics[halves]) >= 0.5)
        if key not in column:
            column[key] = column_of(task, metrics)
        ids.append(str(item["id"]))
        tasks.append(task)
        units.append(complex_of(item))
        cols.append(column[key])
        values.append(float(metrics[metric]))
    return items_of(ids, tasks, units, cols, values)


def paired(a: Items, b: Items) -> Items:
    """Per-question differences ``a - b`` on the questions both have (same id); raises
    ValueError when a shared id has another task, column or complex in ``b``."""
    where = {i: k for k, i in enumerate(b.ids)}
    keep = [k for k, i in enumerate(a.ids) if i in where]
    other = np.array([where[a.ids[k]] for k in keep], dtype=np.int64)
    keep_a = np.array(keep, dtype=np.int64)
    for name in ("task", "column"):
        if not np.array_equal(getattr(a, name)[keep_a], getattr(b, name)[other]):
            raise ValueError(f"paired: the two results give some question another {name}")
    if [a.units[u] for u in a.unit[keep_a]] != [b.units[u] for u in b.unit[other]]:
        raise ValueError("paired: the two results give some question another complex")
    ids = [a.ids[k] for k in keep]
    return items_of(
        ids,
        [TASK_NAMES[t] for t in a.task[keep_a]],
        [a.units[u] for u in a.unit[keep_a]],
        [COLUMN_KEYS[c] if c >= 0 else None for c in a.column[keep_a]],
        a.value[keep_a] - b.value[other],
    )


def _unit_sums(items: Items) -> tuple[np.ndarray, np.ndarray]:
    """(units x groups) sums of values and counts; groups: the tasks, then the columns."""
    n_units, groups = len(items.units), _NT + _NC
    sums = np.zeros((n_units, groups))
    counts = np.zeros((n_units, groups))
    for offset, index in ((0, items.task), (_NT, items.column)):
        ok = index >= 0
        flat = items.unit[ok] * groups + offset + index[ok]
        sums += np.bincount(flat, items.value[ok], n_units * groups).reshape(n_units, groups)
        counts += np.bincount(flat, minlength=n_units * groups).reshape(n_units, groups)
    return sums, counts


def _statistics(sums: np.ndarray, counts: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Every statistic of :data:`STATISTICS` from total sums and counts per group (last axis:
    the groups; any leading axes, one per resample); ``present``: groups with questions in the
    data (the averages run over those). NaN where a needed group has no question."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    tasks, cols = means[..., :_NT], means[..., _NT:]
    t_present, c_present = present[:_NT], present[_NT:]
    nan = np.full(means.shape[:-1], np.nan)

    def _avg(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return values[..., mask].mean(axis=-1) if mask.any() else nan

    paper = _avg(cols, _PAPER) if c_present[_PAPER].all() else nan
    every = _avg(tasks, t_present)
    headline = _avg(tasks, t_present & _HEADLINE)
    return np.concatenate([means, np.stack([paper, every, headline], axis=-1)], axis=-1)


def _draws(n_units: int, seed: int, resamples: int):
    """Blocks of the resamples' draw counts per complex ((block x n_units) float arrays), from
    one seeded generator, always in blocks of :data:`BLOCK` (so the same numbers whatever the
    caller)."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < resamples:
        size = min(BLOCK, resamples - done)
        picks = rng.integers(0, n_units, size=(size, n_units))
        rows = np.repeat(np.arange(size) * n_units, n_units).reshape(size, n_units)
        yield (
            np.bincount((rows + picks).ravel(), minlength=size * n_units)
            .reshape(size, n_units)
            .astype(np.float64)
        )
        done += size


@dataclass(frozen=True)
class Interval:
    """One statistic: its value on the data, the 95% percentile interval and the bootstrap
    standard error (0-1 scale, None when the data give no value), and its question count."""

    value: float | None
    low: float | None
    high: float | None
    se: float | None
    n: int


def _counts_of(counts: np.ndarray) -> list[int]:
    total = counts.sum(axis=0)
    tasks, cols = total[:_NT], total[_NT:]
    headline = int(tasks[_HEADLINE].sum())
    return [*(int(c) for c in total), int(cols[_PAPER].sum()), int(tasks.sum()), headline]


def bootstrap_intervals(
    items: Items, resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, Interval]:
    """Every statistic of ``items`` with its interval (see the module docstring): ``{name:
    Interval}`` for the tasks, columns and averages with a value on the data."""
    if not items.ids:
        return {}
    sums, counts = _unit_sums(items)
    present = counts.sum(axis=0) > 0
    value = _statistics(sums.sum(axis=0), counts.sum(axis=0), present)
    stats = np.concatenate(
        [
            _statistics(w @ sums, w @ counts, present)
            for w in _draws(len(items.units), seed, resamples)
        ]
    )
    n = _counts_of(counts)
    out: dict[str, Interval] = {}
    for k, name in enumerate(STATISTICS):
        if np.isnan(value[k]):
            continue
        column = stats[:, k][~np.isnan(stats[:, k])]
        low, high = np.percentile(column, [2.5, 97.5]) if len(column) else (np.nan, np.nan)
        se = float(column.std(ddof=1)) if len(column) > 1 else 0.0
        out[name] = Interval(float(value[k]), float(low), float(high), se, n[k])
    return out


def point_values(items: Items, keep: set[str] | None = None) -> dict[str, float]:
    """Every statistic of ``items`` on the data (no resampling), on the questions of ``keep``
    only when given; statistics without a value are left out."""
    if keep is not None:
        mask = np.array([i in keep for i in items.ids], dtype=bool)
        items = Items(
            tuple(i for i, k in zip(items.ids, mask) if k),
            items.units,
            items.unit[mask],
            items.task[mask],
            items.column[mask],
            items.value[mask],
        )
    sums, counts = _unit_sums(items)
    total = counts.sum(axis=0)
    value = _statistics(sums.sum(axis=0), total, total > 0)
    return {name: float(value[k]) for k, name in enumerate(STATISTICS) if not np.isnan(value[k])}


def paired_test(diff: Items, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, float]:
    """Two-sided p-value of every statistic of the differences ``diff`` (:func:`paired`) under
    the hypothesis that the two results are exchangeable within each complex: each resample flips
    the sign of all differences of a complex at random (a seeded generator, its own stream);
    ``p = (1 + #{|T*| >= |T|}) / (1 + resamples)``. Identical results give p = 1."""
    if not diff.ids:
        return {}
    sums, counts = _unit_sums(diff)
    total = counts.sum(axis=0)
    present = total > 0
    observed = _statistics(sums.sum(axis=0), total, present)
    rng = np.random.default_rng([seed, 1])
    hits = np.zeros(len(STATISTICS))
    done = 0
    while done < resamples:
        size = min(BLOCK, resamples - done)
        signs = rng.integers(0, 2, size=(size, len(diff.units))) * 2.0 - 1.0
        flipped = _statistics(signs @ sums, np.broadcast_to(total, (size, len(total))), present)
        hits += (np.abs(flipped) >= np.abs(observed) - 1e-12).sum(axis=0)
        done += size
    return {
        name: float((1.0 + hits[k]) / (1.0 + resamples))
        for k, name in enumerate(STATISTICS)
        if not np.isnan(observed[k])
    }


def _round(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 6)


def interval_json(
    intervals: Mapping[str, Interval],
    units: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    p_values: Mapping[str, float] | None = None,
) -> dict:
    """The JSON block of :func:`bootstrap_intervals` (0-1 scale, six decimals): the method,
    resamples, seed, unit and level, the number of complexes, and per statistic ``value``,
    ``ci95``, ``se``, ``n`` (and ``p_value`` given ``p_values``)."""
    stats = {}
    for name, iv in intervals.items():
        entry = {
            "value": _round(iv.value),
            "ci95": [_round(iv.low), _round(iv.high)],
            "se": _round(iv.se),
            "n": iv.n,
        }
        if p_values is not None and name in p_values:
            entry["p_value"] = round(p_values[name], 6)
        stats[name] = entry
    out = {
        "method": METHOD,
        "unit": UNIT,
        "resamples": resamples,
        "seed": seed,
        "level": LEVEL,
        "complexes": units,
        "statistics": stats,
    }
    if p_values is not None:
        out["test"] = TEST
    return out


def _group_sums(items: Items, partitions: Sequence[np.ndarray], n_groups: int):
    """(units x groups) sums of values and counts: ``partitions`` give each question's group
    (index, -1: none) in each partition; a question counts once in each partition."""
    n_units = len(items.units)
    sums = np.zeros((n_units, n_groups))
    counts = np.zeros((n_units, n_groups))
    for group in partitions:
        ok = group >= 0
        flat = items.unit[ok] * n_groups + group[ok]
        size = n_units * n_groups
        sums += np.bincount(flat, items.value[ok], size).reshape(n_units, n_groups)
        counts += np.bincount(flat, minlength=size).reshape(n_units, n_groups)
    return sums, counts


def group_intervals(
    items: Items,
    partitions: Sequence[np.ndarray],
    n_groups: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    test: bool = False,
) -> list[tuple[Interval, int, float | None] | None]:
    """The mean of each group of questions (the bins of ``scoring.factor_table``) with its
    interval, on the resamples :func:`bootstrap_intervals` draws for the same questions (all
    their complexes resampled; a group's mean is computed on each resample as a paper column's
    is); per group ``(Interval, its complexes, p)`` or None without questions. ``p``: with
    ``test``, the sign-flip test's p-value of :func:`paired_test` (``items``: differences)."""
    if not items.ids or not n_groups:
        return [None] * n_groups
    sums, counts = _group_sums(items, partitions, n_groups)
    total_s, total_c = sums.sum(axis=0), counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(total_c > 0, total_s / np.where(total_c > 0, total_c, 1.0), np.nan)
        stats = []
        for w in _draws(len(items.units), seed, resamples):
            c = w @ counts
            stats.append(np.where(c > 0, (w @ sums) / np.where(c > 0, c, 1.0), np.nan))
    stats_arr = np.concatenate(stats)
    p_values = _group_tests(sums, total_c, value, seed, resamples) if test else None
    out: list = []
    for g in range(n_groups):
        if total_c[g] == 0:
            out.append(None)
            continue
        column = stats_arr[:, g][~np.isnan(stats_arr[:, g])]
        low, high = np.percentile(column, [2.5, 97.5])
        se = float(column.std(ddof=1)) if len(column) > 1 else 0.0
        iv = Interval(float(value[g]), float(low), float(high), se, int(total_c[g]))
        units = int((counts[:, g] > 0).sum())
        out.append((iv, units, None if p_values is None else float(p_values[g])))
    return out


def _group_tests(sums, total_c, observed, seed: int, resamples: int) -> np.ndarray:
    """Sign-flip p-values of each group's mean difference (:func:`paired_test`'s rule)."""
    rng = np.random.default_rng([seed, 1])
    hits = np.zeros(len(observed))
    done = 0
    safe = np.where(total_c > 0, total_c, 1.0)
    while done < resamples:
        size = min(BLOCK, resamples - done)
        signs = rng.integers(0, 2, size=(size, sums.shape[0])) * 2.0 - 1.0
        flipped = (signs @ sums) / safe
        hits += (np.abs(flipped) >= np.abs(observed) - 1e-12).sum(axis=0)
        done += size
    return (1.0 + hits) / (1.0 + resamples)

"""The card's smallest detectable headline difference, measured on the build's own questions.

For the ``test`` and ``tiny`` splits: how far apart two models' ``paper_average`` must be for
``misi-bench compare`` to tell them apart at 80% power (two-sided 5% level), for models near the
paper's published rows. Per paper column the rate is the median of the paper's model rows
(Table 1; the human row left out). On each split's questions, with their complexes, two models'
per-question scores are drawn right/wrong at those rates (independently, :data:`DRAWS` pairs,
seeded); the standard error of the paired difference of their paper averages is the scorer's
(:mod:`misi_bench.builder.scoring.bootstrap`: complexes resampled, the standard deviation of the
resampled figure), averaged over the pairs; the detectable difference is that standard error
times ``z(0.975) + z(0.80)`` (:data:`Z_POWER`). Right/wrong draws have the largest spread a score
of that mean can have, so partial credit can only lower the figure; scores correlated within a
complex would raise it.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

from ..core.registry import TASK_NAMES
from ..scoring import paper_reference_rows, score_prediction
from ..scoring.bootstrap import SEED, bootstrap_intervals, complex_of, items_of, paired
from ..scoring.columns import COLUMN_KEYS, PAPER_AVERAGE_COLUMNS, column_of
from ..store.parquet import iter_config_rows

#: z(0.975) + z(0.80): a two-sided 5% test with 80% power.
Z_POWER = 1.959963984540054 + 0.8416212335729143
#: Simulated pairs of models per split.
DRAWS = 4
_COLUMNS = ["id", "task", "answer", "metadata"]


def paper_rates() -> dict[str, float]:
    """Column -> the median of the paper's model rows (0-1; the human row left out)."""
    rows = [r for r in paper_reference_rows() if r.group != "human"]
    out = {}
    for column in COLUMN_KEYS:
        values = [r.score(column) for r in rows if r.score(column) is not None]
        if values:
            out[column] = float(statistics.median(values))
    return out


def _structure(out: Path, split: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(ids, tasks, complexes, columns) of a split's questions."""
    ids, tasks, units, cols = [], [], [], []
    for task in TASK_NAMES:
        for row in iter_config_rows(out, task, split, _COLUMNS):
            metrics = score_prediction(task, None, row["answer"], row.get("metadata"))
            ids.append(str(row["id"]))
            tasks.append(task)
            units.append(complex_of(row))
            cols.append(column_of(task, metrics))
    return ids, tasks, units, cols


def detectable_difference(out: Path, split: str, rates: dict[str, float]) -> dict | None:
    """``{"difference", "se", "questions", "complexes"}`` (0-1) of one split, None when the
    split lacks a column of the paper's average."""
    ids, tasks, units, cols = _structure(Path(out), split)
    if not ids or not set(PAPER_AVERAGE_COLUMNS) <= set(cols):
        return None
    p = np.array([rates.get(c, 0.0) if c else 0.0 for c in cols])
    ses = []
    for k in range(DRAWS):
        rng = np.random.default_rng([SEED, k])
        a = (rng.random(len(ids)) < p).astype(float)
        b = (rng.random(len(ids)) < p).astype(float)
        diff = paired(items_of(ids, tasks, units, cols, a), items_of(ids, tasks, units, cols, b))
        ses.append(bootstrap_intervals(diff)["paper_average"].se)
    se = float(np.mean(ses))
    return {
        "difference": Z_POWER * se,
        "se": se,
        "questions": len(ids),
        "complexes": len(set(units)),
    }


SPLITS = ("test", "tiny")


def _split_text(split: str, got: dict | None) -> str:
    """One split's figure; with at most five complexes no paired test can reach 5% (the
    sign-flip test's smallest p-value is ``2 / 2**n``), which the text says instead."""
    if got is None:
        return f"`{split}`: none (a column of the paper's average has no question)"
    n = got["complexes"]
    where = f"{got['questions']} questions, {n} complexes"
    if 2.0 / 2**n > 0.05:
        return (
            f"`{split}`: none, whatever the difference ({where}: the paired test's smallest "
            f"p-value is {2.0 / 2**n:.2f}; the bootstrap figure would be "
            f"{100 * got['difference']:.1f} points)"
        )
    return f"`{split}`: **{100 * got['difference']:.1f} points** ({where})"


def detectable_paragraph(out: Path) -> str:
    """The card's paragraph (see the module docstring)."""
    rates = paper_rates()
    parts = [_split_text(split, detectable_difference(out, split, rates)) for split in SPLITS]
    return (
        "**Smallest detectable difference.** Two models near the paper's published rows are told "
        "apart by `misi-bench compare` (80% power, two-sided 5% level) when their paper averages "
        f"differ by at least {'; '.join(parts)}. Measured on this build's own questions: per "
        "paper column the median of the paper's model rows (Table 1, the human row left out) as "
        "the rate, two models' right/wrong answers drawn at those rates over the split's "
        f"questions and complexes ({DRAWS} seeded pairs), the standard error of the paired "
        "difference of paper averages from the scorer's bootstrap over complexes, times 2.80 "
        "(z 0.975 + z 0.80). Partial credit can only lower these figures; answers correlated "
        "within a complex would raise them."
    )

"""The paper's Table 1 columns (from the task registry) and which column a question counts in.

Keys: T1, T2, T3, T4_positive, T4_negative, T5, T6, T7, T8, T9; the paper's average is the mean of
the eight columns counted in its headline (T5 and T6 left out, T4 counted as its two halves).
:mod:`.report` re-exports these names (their public home); they live here so that the
interval code (:mod:`.bootstrap`) and the aggregation share them without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.registry import TASK_BY_NAME, TASK_SPECS, canonical_task

#: Report subsets: the two halves of each task whose registry entry names a ``halves`` metric
#: (T4: ``residue_ligand_positive`` and ``residue_ligand_negative``), in task order.
HALF_SUFFIXES = ("positive", "negative")


def _paper_columns() -> tuple[tuple[str, str, str, bool], ...]:
    out = []
    for spec in TASK_SPECS:
        if spec.halves is not None:  # the paper reports T4 as its two halves
            out += [
                (f"T{spec.number}_{suffix}", "subsets", sub, spec.in_headline)
                for suffix, sub in zip(HALF_SUFFIXES, spec.half_names())
            ]
        else:
            out.append((f"T{spec.number}", "tasks", spec.name, spec.in_headline))
    return tuple(out)


#: The paper's Table 1 columns: (column key, report section, name in that section, counted in
#: the paper's average).
PAPER_COLUMNS: tuple[tuple[str, str, str, bool], ...] = _paper_columns()
COLUMN_KEYS: tuple[str, ...] = tuple(c[0] for c in PAPER_COLUMNS)
#: The eight columns whose mean is the paper's average (T5 and T6 left out, T4 counted twice).
PAPER_AVERAGE_COLUMNS: tuple[str, ...] = tuple(c[0] for c in PAPER_COLUMNS if c[3])


def column_of(task: str, metrics: Mapping[str, float]) -> str | None:
    """The paper column of a question of ``task`` with these metrics (T4 by its ``polarity``);
    None for an unknown task or a T4 question without its polarity."""
    try:
        spec = TASK_BY_NAME[canonical_task(task)]
    except ValueError:
        return None
    if spec.halves is None:
        return f"T{spec.number}"
    if spec.halves not in metrics:
        return None
    positive, negative = HALF_SUFFIXES
    return f"T{spec.number}_{positive if float(metrics[spec.halves]) >= 0.5 else negative}"

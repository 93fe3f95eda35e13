"""The card's factors: per task, the factors a result can be broken down by (``misi-bench score
--by-factor``, ``report --by-factor``; ``builder/scoring/factors.py``), their bins and the number
of questions in each bin of the ``test`` and ``tiny`` splits, so that a reader sees before
evaluating which bins are too small to read."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..core.registry import TASK_BY_NAME
from ..scoring.factor_table import manifest_facts, row_bins
from ..scoring.factors import SHARED, factors_of, versions
from ..store.parquet import iter_config_rows

#: A bin with fewer test questions than this is marked: its 95% interval spans tens of points.
SMALL_BIN = 30
SPLITS = ("test", "tiny")


def _counts(out: Path, task: str, split: str, facts: dict) -> Counter:
    rows = list(iter_config_rows(out, task, split, ["id", "task", "pdb_id", "metadata"]))
    found: Counter = Counter()
    for bins in row_bins(rows, facts).values():
        found.update(bins.items())
    return found


def _versions() -> str:
    found = versions()
    shared = found.pop(SHARED, None)
    own = sorted(set(found.values()))
    text = (
        f"task factors {', '.join(own)}"
        if len(own) == 1
        else ", ".join(f"{k} {v}" for k, v in found.items())
    )
    return text + (f", shared factors {shared}" if shared else "")


def factors_section(out: Path, manifest: dict, tasks: list[str]) -> str:
    """The card's "Factors" paragraph and table (markdown)."""
    facts = manifest_facts(manifest)
    lines = [
        "### Factors",
        "",
        "`misi-bench score --by-factor` and `misi-bench report --by-factor` break a result down "
        "by these factors (each task's own, declared in its data file, then those every task "
        f"shares; versions: {_versions()}). Questions "
        f"per bin, test / tiny; `*`: fewer than {SMALL_BIN} test questions, too few to read a "
        "bin's score on its own (its 95% interval spans tens of points).",
        "",
        "| task | factor | bins: test / tiny questions |",
        "|---|---|---|",
    ]
    for task in tasks:
        counts = {s: _counts(out, task, s, facts) for s in SPLITS}
        for factor in factors_of(task):
            cells = []
            for label in factor.bins:
                test, tiny = (counts[s][(factor.key, label)] for s in SPLITS)
                if test or tiny:
                    mark = "*" if test < SMALL_BIN else ""
                    cells.append(f"{label}: {test}{mark} / {tiny}")
            where = "shared" if factor.task == SHARED else "task"
            lines.append(
                f"| T{TASK_BY_NAME[task].number} {task} | {factor.label} ({where}) | "
                + ("; ".join(cells) or "no question has a value")
                + " |"
            )
    if not facts:
        lines += [
            "",
            "This build records no per-complex facts: the ligand, pocket and chain "
            "factors give no bin.",
        ]
    return "\n".join(lines)

"""The one scorer of MiSI-Bench (SPEC section 7), used by the CLI and every evaluation plugin.

Owns: answer parsing, per-question metrics, aggregation into reports, baselines. May import:
``builder.core`` (task registry, errors) and ``builder.operations`` (the operation language);
never Pillow, gemmi, RDKit or the chemistry, scene, tasks or dataset layers, so that evaluation
front-ends load it cheaply. The public names below are the stable API
(``misi_bench.builder.scoring.score_prediction`` etc.).
"""
from __future__ import annotations

from ..core.registry import (BOND_TASKS, CHOICE_TASKS, HEADLINE_EXCLUDED, OPERATION_TASKS, TASK_ALIASES,
                             TASK_NAMES, canonical_task)
from .scorer import (BASELINE_KINDS, MAX_CHARS, BondAnswer, aggregate, baseline_prediction, format_parsed,
                     format_report_markdown, parse_prediction, score_prediction, score_records)

__all__ = [
    "BASELINE_KINDS", "BOND_TASKS", "CHOICE_TASKS", "HEADLINE_EXCLUDED", "MAX_CHARS", "OPERATION_TASKS",
    "TASK_ALIASES", "TASK_NAMES", "BondAnswer", "aggregate", "baseline_prediction", "canonical_task",
    "format_parsed", "format_report_markdown", "parse_prediction", "score_prediction", "score_records",
]

#: Baselines that read images, and so live outside the scorer (which loads no image code):
#: ``pixel_registration`` is ``builder.dataset.pixel_solver`` (T1, T3 by image registration),
#: shown in the dataset card's baselines table next to :data:`BASELINE_KINDS`.
IMAGE_BASELINES = ("pixel_registration",)

"""Blind baselines of a build (docs/decoys.md), written to ``<out>/baselines.json`` on every build.

The scorer's blind baselines (``scoring.blind``: options-only rules on T8's option text, the
text-only answer fitted on the train split) plus the one that needs pictures and so lives here:
for T5/T6, whose options are images, the **option image nearest to the other three** under the
audit's image distance (``audit_checks.image_distance``: visibly different blocks), summed over
the other three; ties broken at random. Its answers are stored per question id in
``baselines.json`` (``image_answers``) so that ``misi-bench score`` and the report use them as data.

:func:`options_only_gate` is the audit's check of a ``balanced`` build: no options-only rule may
beat chance (1 in 4) by more than :data:`MAX_EXCESS`, judged on the lower end of its 95% interval
so that a small build does not fail by the luck of a few questions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .. import scoring
from ..core.registry import CHOICE_TASKS, TASK_NAMES
from ..scoring.blind import (
    BEST_RULE,
    IMAGE_RULE,
    OPTION_RULES,
    chance_excess,
    pick_lowest,
)
from .audit_checks import block_means, decode, image_distance
from .parquet import iter_config_rows

log = logging.getLogger(__name__)

BASELINES_FILE = "baselines.json"
SPLITS = ("train", "test")
#: Options-only rules may beat chance by at most this much (0-1 scale) in a balanced build.
MAX_EXCESS = 0.10
CHANCE = 0.25
_COLUMNS = ["id", "task", "answer", "metadata", "options"]


def option_image_indices(views: Iterable[str]) -> list[int]:
    """Positions of the option images (views named ``option A`` .. ``option D``) in a row."""
    return [k for k, v in enumerate(views) if str(v).startswith("option ")]


def image_medoid(pixels: list[np.ndarray], rng: np.random.Generator) -> str:
    """The letter of the option image nearest to the others (sum of image distances)."""
    means = [block_means(p) for p in pixels]
    n = len(means)
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            dist[i, j] = dist[j, i] = image_distance(means[i], means[j])
    return pick_lowest(dist.sum(axis=1), rng)


def image_medoid_answers(
    out: Path, tasks: Iterable[str], split: str, seed: int = 0
) -> dict[str, str]:
    """id -> letter picked by the image rule, for every question of ``split`` whose options are
    images (T5, T6)."""
    answers: dict[str, str] = {}
    rng = np.random.default_rng(seed)
    for task in tasks:
        if task not in CHOICE_TASKS:
            continue
        for row in iter_config_rows(out, task, split, ["id", "images", "image_views"]):
            idx = option_image_indices(row["image_views"])
            if len(idx) < 2:
                continue
            answers[row["id"]] = image_medoid([decode(row["images"][k]["bytes"]) for k in idx], rng)
    return answers


def compute_blind(out: Path, tasks: Iterable[str], seed: int = 0) -> dict:
    """Blind baselines of a built folder, per split (see the module docstring)."""
    out = Path(out)
    tasks = [t for t in TASK_NAMES if t in set(tasks)]
    rows = {s: [r for t in tasks for r in iter_config_rows(out, t, s, _COLUMNS)] for s in SPLITS}
    text_model = scoring.fit_text_only(rows["train"])
    image_answers = {s: image_medoid_answers(out, tasks, s, seed) for s in SPLITS}
    return {
        "chance": CHANCE,
        "seed": int(seed),
        "text_model": text_model,
        "splits": {
            s: scoring.blind_baselines(rows[s], text_model, image_answers[s], seed) for s in SPLITS
        },
        "image_answers": image_answers,
    }


def write_blind(out: Path, tasks: Iterable[str], seed: int = 0) -> dict:
    data = compute_blind(out, tasks, seed)
    path = Path(out) / BASELINES_FILE
    path.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return data


def read_blind(out: Path) -> dict | None:
    """``baselines.json`` of a build folder, or None when it has none."""
    path = Path(out) / BASELINES_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def options_only_gate(data: Mapping, max_excess: float = MAX_EXCESS) -> dict:
    """The audit's options-only check: every options-only rule's 95% interval must reach down to
    ``chance + max_excess`` on every split and choice task. Returns ``{"ok", "max_excess",
    "worst": {task: {"split", "rule", "score", "ci95"}}, "problems": [...]}``."""
    problems, worst = [], {}
    for split, result in data["splits"].items():
        for rule in (*OPTION_RULES, IMAGE_RULE):
            for task, cell in result.get(rule, {}).items():
                if cell["score"] is None:
                    continue
                if task not in worst or cell["score"] > worst[task]["score"]:
                    worst[task] = {
                        "split": split,
                        "rule": rule,
                        "score": round(cell["score"], 4),
                        "ci95": cell["ci95"],
                    }
                if chance_excess(cell, data.get("chance", CHANCE)) > max_excess:
                    problems.append(
                        f"{task} {split}: options-only rule {rule} scores {100 * cell['score']:.1f}% "
                        f"(95% interval {100 * cell['ci95'][0]:.1f}-{100 * cell['ci95'][1]:.1f}%), "
                        f"more than {100 * max_excess:.0f} points above chance"
                    )
    return {
        "ok": not problems,
        "max_excess": max_excess,
        "worst": dict(sorted(worst.items())),
        "problems": problems,
    }


def blind_table(data: Mapping | None, tasks: Iterable[str]) -> str:
    """The card's per-split table of the blind baselines ('' when the build has none)."""
    if not data:
        return ""
    choice = [t for t in tasks if t in CHOICE_TASKS]
    names = {k: data["splits"][k] for k in SPLITS if data["splits"].get(k)}
    table = scoring.format_blind_markdown(
        {s: {n: c for n, c in v.items() if n != "text_only"} for s, v in names.items()}, choice
    )
    text = scoring.format_blind_markdown(
        {s: {n: c for n, c in v.items() if n == "text_only"} for s, v in names.items()}, list(tasks)
    )
    best = {s: v.get(BEST_RULE, {}) for s, v in names.items()}
    rules = sorted({c.get("rule", "") for v in best.values() for c in v.values()} - {""})
    return (
        f"Options-only baselines (score %, 95% interval, questions; chance {100 * CHANCE:.0f}%; the best "
        f"rule is picked after seeing the scores, here among {', '.join(rules) or 'none'}):\n\n"
        f"{table}\n\nText-only baseline (score %):\n\n{text}"
    )

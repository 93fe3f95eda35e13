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
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .. import scoring
from ..core.registry import TASK_BY_NAME, TASK_NAMES
from ..core.rows import SCORE_COLUMNS
from ..scoring.blind import (
    BEST_RULE,
    IMAGE_RULE,
    OPTION_RULES,
    chance_excess,
    pick_lowest,
)
from ..scoring.kinds import kind_of
from ..store.cluster import pool_map
from ..store.parquet import iter_config_rows
from .card_stats import (
    answer_counts_of,
    distance_sums,
    option_distances,
    shard_jobs,
    text_only_scores_of,
)


def _options_only(task: str) -> bool:
    """Whether the options-only baselines apply to ``task``'s questions (its answer kind's)."""
    spec = TASK_BY_NAME.get(task)
    return spec is not None and "options_only" in kind_of(spec).blind


log = logging.getLogger(__name__)

BASELINES_FILE = "baselines.json"
SPLITS = ("train", "test")
#: Options-only rules may beat chance by at most this much (0-1 scale) in a balanced build.
MAX_EXCESS = 0.10
CHANCE = 0.25
_COLUMNS = list(SCORE_COLUMNS)


def image_medoid(pixels: list[np.ndarray], rng: np.random.Generator) -> str:
    """The letter of the option image nearest to the others (sum of image distances)."""
    return pick_lowest(distance_sums(pixels), rng)


def image_medoid_answers(
    out: Path, tasks: Iterable[str], split: str, seed: int = 0, pool=None
) -> dict[str, str]:
    """id -> letter picked by the image rule, for every question of ``split`` whose options are
    images (T5, T6). The distances are measured one shard file per job (in ``pool`` when given);
    ties are then broken in question order from one generator, so the answers are the same for
    any worker count."""
    answers: dict[str, str] = {}
    rng = np.random.default_rng(seed)
    jobs = shard_jobs(out, [t for t in tasks if _options_only(t)], (split,))
    for found in pool_map(
        pool, option_distances, [job.path for job in jobs], f"blind baselines: {split} images"
    ):
        for qid, sums in found:
            answers[qid] = pick_lowest(sums, rng)
    return answers


def compute_blind(out: Path, tasks: Iterable[str], seed: int = 0, pool=None) -> dict:
    """Blind baselines of a built folder, per split (see the module docstring). The work that
    grows with the build (the text-only model's answer counts and scores, the image rule's
    distances) is done one shard file per job, in ``pool`` (the merge's process pool) when
    given; the result is the same for any worker count."""
    out = Path(out)
    tasks = [t for t in TASK_NAMES if t in set(tasks)]
    choice = [t for t in tasks if _options_only(t)]
    rows = {s: [r for t in choice for r in iter_config_rows(out, t, s, _COLUMNS)] for s in SPLITS}
    counts: dict[str, Counter] = {}
    train = [job.path for job in shard_jobs(out, tasks, ("train",))]
    for part in pool_map(pool, answer_counts_of, train, "blind baselines: answer counts"):
        for task, counter in part.items():
            counts.setdefault(task, Counter()).update(counter)
    text_model = scoring.text_model_of(counts)
    image_answers = {s: image_medoid_answers(out, tasks, s, seed, pool) for s in SPLITS}
    splits = {}
    for split in SPLITS:
        jobs = [(job.path, text_model) for job in shard_jobs(out, tasks, (split,))]
        text: dict[str, list[float]] = {}
        for part in pool_map(pool, text_only_scores_of, jobs, f"blind baselines: {split}"):
            for task, scores in part.items():
                text.setdefault(task, []).extend(scores)
        splits[split] = scoring.blind_baselines(
            rows[split], None, image_answers[split], seed, text_scores=text
        )
    return {
        "chance": CHANCE,
        "seed": int(seed),
        "text_model": text_model,
        "splits": splits,
        "image_answers": image_answers,
    }


def write_blind(out: Path, tasks: Iterable[str], seed: int = 0, pool=None) -> dict:
    data = compute_blind(out, tasks, seed, pool)
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
                        **({"complexes": cell["complexes"]} if "complexes" in cell else {}),
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
    choice = [t for t in tasks if _options_only(t)]
    names = {k: data["splits"][k] for k in SPLITS if data["splits"].get(k)}
    text = scoring.format_blind_markdown(
        {s: {n: c for n, c in v.items() if n == "text_only"} for s, v in names.items()}, list(tasks)
    )
    text = f"Text-only baseline (score %):\n\n{text}"
    if not choice:  # no task of the build has options: no options-only table (not an empty one)
        return text
    table = scoring.format_blind_markdown(
        {s: {n: c for n, c in v.items() if n != "text_only"} for s, v in names.items()}, choice
    )
    best = {s: v.get(BEST_RULE, {}) for s, v in names.items()}
    rules = sorted({c.get("rule", "") for v in best.values() for c in v.values()} - {""})
    return (
        f"Options-only baselines (score %, 95% interval, questions; chance {100 * CHANCE:.0f}%; the best "
        f"rule is picked after seeing the scores, here among {', '.join(rules) or 'none'}):\n\n"
        f"{table}\n\n{text}"
    )

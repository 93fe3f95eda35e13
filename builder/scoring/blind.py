"""Blind baselines: answers that never look at the pictures (docs/decoys.md).

A score means the model used the pictures only where it beats these baselines, reported beside
the chance levels of :mod:`.baselines`:

* **options only** (choice tasks whose options are text, T8 ``move x A, move y B``): a rule that
  reads the four options and nothing else. ``option_medoid``: the option nearest to the other
  three (sum of absolute differences of its move components, summed over the other three);
  ``sign_majority``: the option whose component signs agree most often with the majority sign of
  each component over the four options; ``magnitude_median``: the option whose component
  magnitudes are nearest (sum of absolute differences) to the median magnitude of each component;
  ``component_median``: the option nearest (sum of absolute differences) to the per-component
  median of the signed values; ``nearest_zero``: the option with the smallest sum of absolute
  components (the smallest move).
  Ties are broken by a random choice among the tied letters. ``options_best`` is the best of the
  rules on the questions scored (an optimistic figure: the rule is picked after seeing the
  scores). T5/T6, whose options are images, have their options-only rule (the option image
  nearest to the other three) in the dataset layer (``builder.checks.blind``), which may decode
  images; its answers come here as data (``image_answers``).
* **text only**: the question text alone, answered with the train split's most frequent answer of
  the task (answers compared in the scorer's canonical form, so ``move x 3`` and ``move x +3``
  are one answer).

Intervals are 95% intervals by the scorer's one method (:mod:`.bootstrap`: complexes resampled,
percentile interval), the method of every route.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..core.registry import canonical_task
from ..operations.language import parse_operations
from .bootstrap import bootstrap_intervals, complex_of, items_of
from .kinds import kind_of
from .metrics import score_prediction
from .parsing import format_parsed, parse_prediction

LETTERS = "ABCD"
#: Rules that read only the text of the options (T8).
OPTION_RULES = (
    "option_medoid",
    "sign_majority",
    "magnitude_median",
    "component_median",
    "nearest_zero",
)
#: Name of the best-of row and of the image rule (computed in the dataset layer).
BEST_RULE = "options_best"
IMAGE_RULE = "option_image_medoid"
TEXT_ONLY = "text_only"
#: Display names of the blind baselines (card, score, report).
BLIND_NAMES = {
    "option_medoid": "options only: option nearest the others",
    "sign_majority": "options only: sign majority",
    "magnitude_median": "options only: magnitude median",
    "component_median": "options only: option nearest the median",
    "nearest_zero": "options only: smallest move",
    IMAGE_RULE: "options only: option image nearest the others",
    BEST_RULE: "options only: best rule",
    TEXT_ONLY: "text only: train's most frequent answer",
}


def option_vectors(options: Iterable[str]) -> np.ndarray | None:
    """(n, m) signed magnitudes of options written as operation lists (``move x 3, move y -2``
    -> ``[3, -2]``); None unless every option parses into the same axes in the same order."""
    rows, shape = [], None
    for text in options:
        try:
            ops = parse_operations(str(text))
        except ValueError:
            return None
        key = tuple((type(op).__name__, op.axis) for op in ops)
        if not ops or (shape is not None and key != shape):
            return None
        shape = key
        rows.append([op.magnitude for op in ops])
    return np.asarray(rows, dtype=np.float64) if len(rows) >= 2 else None


def rule_scores(rule: str, vectors: np.ndarray) -> np.ndarray:
    """Per-option score of an options-only rule (lower = chosen)."""
    if rule == "option_medoid":
        return np.abs(vectors[:, None, :] - vectors[None, :, :]).sum(axis=(1, 2))
    if rule == "sign_majority":
        signs = np.sign(vectors)
        majority = np.sign(signs.sum(axis=0))
        return -((signs == majority) & (majority != 0)).sum(axis=1).astype(np.float64)
    if rule == "magnitude_median":
        mags = np.abs(vectors)
        return np.abs(mags - np.median(mags, axis=0)).sum(axis=1)
    if rule == "component_median":
        return np.abs(vectors - np.median(vectors, axis=0)).sum(axis=1)
    if rule == "nearest_zero":
        return np.abs(vectors).sum(axis=1)
    raise ValueError(
        f"unknown options-only rule {rule!r}; expected one of {', '.join(OPTION_RULES)}"
    )


def pick_lowest(scores: np.ndarray, rng: np.random.Generator) -> str:
    """The letter of the lowest score; ties broken at random."""
    tied = np.flatnonzero(scores <= scores.min() + 1e-9)
    return LETTERS[int(tied[int(rng.integers(len(tied)))]) if len(tied) > 1 else int(tied[0])]


def options_only_prediction(rule: str, record: Mapping, rng: np.random.Generator) -> str | None:
    """The letter an options-only ``rule`` picks for one question; None when the options are not
    text operation lists (T5/T6 options are images) or the task's answer kind carries no options."""
    if "options_only" not in kind_of(record["task"]).blind:
        return None
    vectors = option_vectors(record.get("options") or ())
    if vectors is None:
        return None
    return pick_lowest(rule_scores(rule, vectors), rng)


def canonical_answer(task: str, answer: str) -> str:
    """An answer in the scorer's canonical form (itself when it does not parse)."""
    text = format_parsed(task, parse_prediction(task, answer))
    return text if text is not None else str(answer)


def fit_text_only(train_rows: Iterable[Mapping]) -> dict[str, str]:
    """The text-only model: task -> the most frequent (canonical) answer among ``train_rows``;
    ties go to the answer that sorts first."""
    return text_model_of(answer_counts(train_rows))


def answer_counts(rows: Iterable[Mapping]) -> dict[str, Counter]:
    """task -> how often each canonical answer occurs among ``rows`` (task, answer); counts of
    parts of a split add up to the split's (``Counter`` addition)."""
    counts: dict[str, Counter] = {}
    for row in rows:
        task = canonical_task(row["task"])
        counts.setdefault(task, Counter())[canonical_answer(task, row["answer"])] += 1
    return counts


def text_model_of(counts: Mapping[str, Counter]) -> dict[str, str]:
    """The text-only model of :func:`answer_counts` (see :func:`fit_text_only`)."""
    return {
        task: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        for task, c in sorted(counts.items())
        if c
    }


def text_only_metrics(task: str, text_model: Mapping[str, str], row: Mapping) -> dict | None:
    """The scorer's metrics of the text-only rule's answer on one row (``task`` canonical), None
    when the model has no answer for the task."""
    if task not in text_model:
        return None
    return score_prediction(
        task,
        text_model[task],
        row["answer"],
        row.get("metadata"),
        options=list(row.get("options") or []) or None,
    )


def text_only_score(task: str, text_model: Mapping[str, str], row: Mapping) -> float | None:
    """The text-only rule's score (0-1) on one row (see :func:`text_only_metrics`)."""
    metrics = text_only_metrics(task, text_model, row)
    return None if metrics is None else float(metrics["score"])


#: Complexes a baseline cell needs before its interval is read as beating chance: a bootstrap
#: over fewer clusters is too narrow (with two complexes it can exclude chance at 50 %), so such a
#: cell's interval is shown but never counted by :func:`chance_excess` (too few to tell).
MIN_COMPLEXES = 20


def rule_cells(scores: Sequence[tuple[str, str, str, float]]) -> dict[str, dict]:
    """Per-task cells ``{"n", "complexes", "score", "ci95"}`` (0-1) of one baseline's
    per-question scores (``(id, task, complex, score)``), the interval by the scorer's one method
    (:func:`.bootstrap.bootstrap_intervals`, complexes resampled)."""
    if not scores:
        return {}
    ids, tasks, units, values = zip(*scores)
    found = bootstrap_intervals(items_of(ids, tasks, units, [None] * len(ids), values))
    complexes: dict[str, set[str]] = {}
    for task, unit in zip(tasks, units):
        complexes.setdefault(canonical_task(task), set()).add(unit)
    out = {}
    for task in dict.fromkeys(canonical_task(t) for t in tasks):
        iv = found[task]
        out[task] = {
            "n": iv.n,
            "complexes": len(complexes[task]),
            "score": iv.value,
            "ci95": [round(iv.low, 4), round(iv.high, 4)],
        }
    return out


def blind_baselines(
    rows: Iterable[Mapping],
    text_model: Mapping[str, str] | None = None,
    image_answers: Mapping[str, str] | None = None,
    seed: int = 0,
    text_scores: Mapping[str, Sequence[Sequence]] | None = None,
) -> dict:
    """Scores of the blind baselines on ``rows`` (id, task, answer, metadata, options):
    ``{baseline: {task: {"n", "score", "ci95"}}}`` (0-1 scale; intervals: :func:`rule_cells`).
    Options-only rules cover the choice tasks they can read (T8 from the option text; T5/T6 from
    ``image_answers``, id -> letter); ``options_best`` is, per task, the best of those rules;
    ``text_only`` needs ``text_model`` (:func:`fit_text_only` on the train split) and covers every
    task, unless ``text_scores`` (task -> ``(id, complex, score)`` of each of its questions,
    :func:`text_only_score` measured elsewhere) gives its scores."""
    rows = list(rows)
    out: dict[str, list[tuple[str, str, str, float]]] = {}

    def _add(rule: str, row: Mapping, score: float) -> None:
        item = (str(row["id"]), canonical_task(row["task"]), complex_of(row), score)
        out.setdefault(rule, []).append(item)

    for rule in OPTION_RULES:
        rng = np.random.default_rng(seed)
        for row in rows:
            pred = options_only_prediction(rule, row, rng)
            if pred is not None:
                _add(rule, row, float(pred == str(row["answer"]).strip()))
    for row in rows:
        pred = (image_answers or {}).get(str(row["id"]))
        if pred is not None:
            _add(IMAGE_RULE, row, float(pred == str(row["answer"]).strip()))
    if text_scores is not None:
        for task, scores in text_scores.items():
            for qid, unit, score in scores:
                out.setdefault(TEXT_ONLY, []).append((str(qid), task, str(unit), float(score)))
    elif text_model:
        for row in rows:
            score = text_only_score(canonical_task(row["task"]), text_model, row)
            if score is not None:
                _add(TEXT_ONLY, row, score)
    return blind_cells(out)


def blind_cells(out: Mapping[str, Sequence[tuple[str, str, str, float]]]) -> dict:
    """The cells of :func:`blind_baselines` from each blind rule's per-question scores
    (``(id, task, complex, score)``), with ``options_best``, in the rules' order."""
    result = {name: rule_cells(scores) for name, scores in out.items()}
    best: dict[str, dict] = {}
    for name in (*OPTION_RULES, IMAGE_RULE):
        for task, cell in result.get(name, {}).items():
            if task not in best or cell["score"] > best[task]["score"]:
                best[task] = {**cell, "rule": name}
    if best:
        result[BEST_RULE] = best
    return {
        name: result[name]
        for name in (*OPTION_RULES, IMAGE_RULE, BEST_RULE, TEXT_ONLY)
        if name in result
    }


def chance_excess(cell: Mapping, chance: float = 0.25) -> float:
    """How far (0-1 scale) the lower end of a cell's 95% interval lies above ``chance``; minus
    infinity without an interval or from fewer than :data:`MIN_COMPLEXES` complexes (a cell
    written before cells counted complexes is read as it always was)."""
    if not cell.get("ci95") or cell.get("complexes", MIN_COMPLEXES) < MIN_COMPLEXES:
        return -math.inf
    return float(cell["ci95"][0]) - chance


def format_blind_markdown(
    by_split: Mapping[str, Mapping],
    tasks: Iterable[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """A markdown table of :func:`blind_baselines` results per split: one row per (baseline,
    split), one column per task, cells ``score % [low, high] (n=...)``; ``names``: display names
    (default :data:`BLIND_NAMES`), in row order."""
    display = dict(names or BLIND_NAMES)
    by_split = {s: v for s, v in by_split.items() if v}
    names = [n for n in display if any(n in v for v in by_split.values())]
    present = {t for v in by_split.values() for cells in v.values() for t in cells}
    cols = [t for t in (tasks or sorted(present)) if t in present]
    lines = ["| baseline | split | " + " | ".join(cols) + " |", "|---|---|" + "---:|" * len(cols)]
    for name in names:
        for split, result in by_split.items():
            cells = result.get(name, {})
            if not cells:
                continue
            text = []
            for t in cols:
                c = cells.get(t)
                text.append(
                    "–"
                    if not c or c["score"] is None
                    else f"{100 * c['score']:.1f} [{100 * c['ci95'][0]:.1f}, {100 * c['ci95'][1]:.1f}] (n={c['n']})"
                )
            lines.append(f"| {display[name]} | {split} | " + " | ".join(text) + " |")
    return "\n".join(lines)

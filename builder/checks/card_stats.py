"""Baselines measured on every question of a build, one shard file per job, so that the merge's
process pool spreads them: the card's chance rows (random answer, constant answer), its text-only
row, and the image distances behind T5/T6's options-only image rule (``blind.py``).

A job reads one shard file of one config and split (``parquet.config_shards``) and returns one
small entry per question; the caller gathers the jobs' results in job order, so every figure is
the same for any worker count (and without a pool). The random baseline draws from a generator
seeded by the build's seed and the job's position in that order, never from a stream shared
across jobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .. import scoring
from ..core.registry import TASK_BY_NAME, canonical_task
from ..core.rows import SCORE_COLUMNS
from ..scoring.bootstrap import complex_of
from ..store.cluster import pool_map
from ..store.parquet import config_shards, read_rows
from .audit_checks import block_means, decode, image_distance

#: The random baseline is drawn this many times per question (its expected score, less noise).
RANDOM_DRAWS = 20
#: Splits the card pools (train and test: more questions than the test split alone, less noise).
CARD_SPLITS = ("train", "test")
#: The chance kinds of the card's table, in its row order.
CHANCE_KINDS = ("random", "always_no")
TEXT_ONLY = "text_only"
_SCORE_COLUMNS = list(SCORE_COLUMNS)


@dataclass(frozen=True)
class ShardJob:
    """One shard file of ``task``'s ``split``; ``index``: its position in the job list."""

    path: str
    task: str
    split: str
    index: int


def shard_jobs(out, tasks: Iterable[str], splits: Sequence[str] = CARD_SPLITS) -> list[ShardJob]:
    """Every shard file of ``tasks`` (outer) and ``splits`` (inner), in that order."""
    jobs: list[ShardJob] = []
    for task in tasks:
        for split in splits:
            for path in config_shards(out, task, split):
                jobs.append(ShardJob(str(path), task, split, len(jobs)))
    return jobs


def _entry(task: str, metrics: Sequence[dict]) -> dict:
    """One question's entry for ``scoring.aggregate``: the mean score of its ``metrics`` (one per
    draw) and, for a task with halves (T4), the gold half they all share."""
    entry = {key: sum(m[key] for m in metrics) / len(metrics) for key in ("score", "exact")}
    if scoring.T9_PAPER_EXACT in metrics[0]:  # T9 exact the paper's way (the card's floor)
        entry[scoring.T9_PAPER_EXACT] = metrics[0][scoring.T9_PAPER_EXACT]
    halves = TASK_BY_NAME[canonical_task(task)].halves
    if halves is not None and halves in metrics[0]:
        entry[halves] = metrics[0][halves]
    return entry


def score_shard(args: tuple[ShardJob, int, str | None]) -> dict[str, list[dict]]:
    """The entries of one shard's questions under each chance kind and, when the build's text-only
    answer of the task is given, the text-only rule: ``{kind: [entry per question]}``."""
    job, seed, text_answer = args
    rng = np.random.default_rng([int(seed), job.index])
    task = job.task
    got: dict[str, list[dict]] = {kind: [] for kind in (*CHANCE_KINDS, TEXT_ONLY)}
    for row in read_rows(job.path, _SCORE_COLUMNS):
        answer, metadata = row["answer"], row["metadata"]
        for kind in CHANCE_KINDS:
            draws = RANDOM_DRAWS if kind == "random" else 1
            metrics = [
                scoring.score_prediction(
                    task, scoring.baseline_prediction(kind, task, row, rng), answer, metadata
                )
                for _ in range(draws)
            ]
            got[kind].append(_entry(task, metrics))
        if text_answer is not None:
            metrics = scoring.text_only_metrics(task, {task: text_answer}, row)
            got[TEXT_ONLY].append(_entry(task, [metrics]))
    return got


def card_scores(out, tasks: Sequence[str], text_model: dict, seed: int, pool=None) -> dict:
    """``{kind: [(task, entry), ...]}`` over every train and test question of ``tasks`` (tasks
    outer, then train and test) for the chance kinds and the text-only rule (tasks the build's
    ``text_model`` answers), ready for ``scoring.aggregate``."""
    jobs = shard_jobs(out, tasks)
    args = [(job, seed, text_model.get(job.task)) for job in jobs]
    scored: dict[str, list] = {kind: [] for kind in (*CHANCE_KINDS, TEXT_ONLY)}
    for job, got in zip(jobs, pool_map(pool, score_shard, args, "card: chance levels")):
        for kind, entries in got.items():
            scored[kind].extend((job.task, e) for e in entries)
    return scored


def answer_counts_of(path: str) -> dict:
    """``scoring.answer_counts`` of one shard's questions."""
    return scoring.answer_counts(read_rows(path, ["task", "answer"]))


def text_only_scores_of(args: tuple[str, dict]) -> dict[str, list[tuple[str, str, float]]]:
    """canonical task -> ``(id, complex, score)`` of the text-only rule on each question of one
    shard (in order; the complex is the resampling unit of the intervals)."""
    path, text_model = args
    got: dict[str, list[tuple[str, str, float]]] = {}
    for row in read_rows(path, _SCORE_COLUMNS):
        task = canonical_task(row["task"])
        score = scoring.text_only_score(task, text_model, row)
        if score is not None:
            got.setdefault(task, []).append((str(row["id"]), complex_of(row), score))
    return got


def option_image_indices(views: Iterable[str]) -> list[int]:
    """Positions of the option images (views named ``option A`` .. ``option D``) in a row."""
    return [k for k, v in enumerate(views) if str(v).startswith("option ")]


def distance_sums(pixels: Sequence[np.ndarray]) -> np.ndarray:
    """Each option image's summed image distance (visibly different blocks) to the others."""
    means = [block_means(p) for p in pixels]
    n = len(means)
    dist = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            dist[i, j] = dist[j, i] = image_distance(means[i], means[j])
    return dist.sum(axis=1)


def option_distances(path: str) -> list[tuple[str, np.ndarray]]:
    """``(id, distance_sums)`` of every question of one shard whose options are images."""
    got = []
    for row in read_rows(path, ["id", "images", "image_views"]):
        idx = option_image_indices(row["image_views"])
        if len(idx) >= 2:
            pixels = [decode(row["images"][k]["bytes"]) for k in idx]
            got.append((row["id"], distance_sums(pixels)))
    return got

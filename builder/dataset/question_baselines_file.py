"""The build's per-question baselines file (``scoring.question_baselines``): every blind rule's
score on every question of each split, computed once at merge time next to ``baselines.json``,
so that ``score``, ``report`` and the front-ends read them instead of scoring 44 answers per
question again. Each split's rows are read in the order ``misi-bench score`` reads a whole split
(configs in registry order, shards in order), the order the generators run through; the splits
are computed one job each (in the merge's pool when given), and the file's bytes are the same
for any worker count."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.atomic import write_atomic
from ..core.registry import TASK_NAMES
from ..core.rows import SCORE_COLUMNS
from ..core.shards import SPLITS
from ..scoring import question_baselines as qb
from ..store.cluster import pool_map
from ..store.parquet import iter_config_rows

log = logging.getLogger(__name__)

MANIFEST_KEY = qb.MANIFEST_KEY

_COLUMNS = list(SCORE_COLUMNS)


def split_rows(out: Path, tasks: Iterable[str], split: str) -> list[dict]:
    """The scorer's columns of every row of ``split`` in build order."""
    wanted = set(tasks)
    return [
        dict(r)
        for task in TASK_NAMES
        if task in wanted
        for r in iter_config_rows(out, task, split, _COLUMNS)
    ]


def _split_table(job: tuple) -> qb.QuestionBaselines:
    out, tasks, split, text_model, image_answers, seed = job
    rows = split_rows(Path(out), tasks, split)
    return qb.compute_question_baselines(rows, text_model, image_answers, seed, split)


def write_question_baselines(out: Path, tasks: Iterable[str], blind: Mapping, pool=None) -> dict:
    """Write :data:`scoring.question_baselines.FILE` into ``out`` from the build's blind inputs
    (``blind``: the data of ``baselines.json``: text model, T5/T6 image letters per split; the
    rules' generators use the scorer's seed, :data:`scoring.question_baselines.SEED`, as every
    scoring route always has); returns the manifest's entry (path, sha256, bytes)."""
    tasks = list(tasks)
    images = blind.get("image_answers") or {}
    jobs = [
        (str(out), tasks, split, blind.get("text_model") or None, images.get(split), qb.SEED)
        for split in SPLITS
    ]
    tables = pool_map(pool, _split_table, jobs, "per-question baselines")
    data = qb.question_baselines_bytes({t.split: t for t in tables})
    write_atomic(Path(out) / qb.FILE, lambda tmp: tmp.write_bytes(data))
    log.info("per-question baselines: %s, %d bytes", qb.FILE, len(data))
    return qb.file_entry(data)

"""Chance levels of a build for the report: the scorer's chance baselines, the blind baselines
(docs/decoys.md) and the blind floor (``scoring.floors``), scored on a build folder's split."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.registry import TASK_NAMES
from ...builder.core.shards import checked_shards
from ..common import split_records
from .reference import SCORER_KEY, TASK_COLUMN
from .sources import _empty, _pct


@dataclass(frozen=True)
class ChanceLevels:
    """Chance levels of a build: ``rows`` baseline name -> column -> percent; ``n`` questions."""

    build: str
    split: str
    n: int
    config_hash: str | None
    rows: dict[str, dict[str, float | None]]
    #: The build's blind floor of the score (``scoring.floors.Floor``, with its per-question
    #: values): what a result's margin is paired on.
    floor: object | None = None


#: The report row of the build's blind floor (``scoring.floors``).
FLOOR_NAME = "Blind floor: best blind baseline per column"


def floor_level(table, records: list[dict]) -> tuple[dict, object]:
    """The build's blind floor on ``records`` as a report row (percent; ``scoring.floors``: the
    best blind baseline of each column, T4's halves included, on the same questions), and the
    floor itself (``table``: the questions' per-question baselines)."""
    from ...builder.scoring import floors  # noqa: PLC0415

    floor = floors.floors_of(table)["score"]
    scores = _empty()
    for column in scores:
        scores[column] = _pct(floor.values.get(SCORER_KEY.get(column, column)))
    return {FLOOR_NAME: scores}, floor


CHANCE_NAMES = {"random": "Chance: random answer", "always_no": "Chance: constant (No / None / A)"}


def _rule_row(table, rule: str) -> dict[str, float | None]:
    """A rule's mean score per report column (percent) over the questions it answers."""
    import math  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    from ...builder.scoring.columns import COLUMN_KEYS  # noqa: PLC0415

    scores = _empty()
    values = table.value(rule, "score")
    for column in scores:
        key = SCORER_KEY.get(column, column)
        if key not in COLUMN_KEYS:
            continue
        got = values[(table.columns == COLUMN_KEYS.index(key)) & ~np.isnan(values)]
        scores[column] = _pct(math.fsum(got.tolist()) / got.size) if got.size else None
    return scores


def question_table(build: Path, split: str, records: list[dict], manifest: dict):
    """The per-question baselines of ``records``: the build's stored file (checked against its
    manifest), else computed once (an older build)."""
    from ...builder.scoring import fit_text_only  # noqa: PLC0415
    from ...builder.scoring import question_baselines as qb  # noqa: PLC0415

    entry = manifest.get(qb.MANIFEST_KEY)
    stored = None
    if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
        stored = qb.read_question_baselines(build / qb.FILE, split, entry["sha256"])

    def inputs():
        train, image_answers = _blind_inputs(build, split)
        return (fit_text_only(train) if train else None), image_answers

    return qb.baselines_of_rows(records, stored, inputs, qb.SEED)


def chance_levels(build: str | Path, split: str = "test") -> ChanceLevels:
    """The scorer's baselines (``baseline_prediction``; random: the mean of 20
    draws per question), the blind baselines and the blind floor on every question of ``split``
    in a build folder, from its per-question baselines (``scoring.question_baselines``)."""
    build = Path(build)
    manifest_path = build / "manifest.json"
    if not manifest_path.is_file():
        raise MisiError(f"{build}: not a build folder (no manifest.json)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    records = split_records(build, split)
    if not records:
        raise MisiError(f"{build}: no questions in split {split!r}")
    table = question_table(build, split, records, manifest)
    rows = {CHANCE_NAMES.get(kind, kind): _rule_row(table, kind) for kind in CHANCE_NAMES}
    rows.update(blind_levels(table, records))
    floor_row, floor = floor_level(table, records)
    rows.update(floor_row)
    return ChanceLevels(str(build), split, len(records), manifest.get("config_hash"), rows, floor)


def blind_levels(table, records: list[dict]) -> dict[str, dict[str, float | None]]:
    """The blind baselines of a build (docs/decoys.md) as report rows: text only (fitted on the
    build's train split) and options only (best rule per choice task; T5/T6's image rule comes
    from the build's ``baselines.json``, written by the build, which decodes the images)."""
    from ...builder.scoring import BLIND_NAMES, reference_cells  # noqa: PLC0415

    result = reference_cells(table, records)
    rows = {}
    for name in ("text_only", "options_best"):
        if name in result:
            scores = _empty()
            for task, cell in result[name].items():
                if task in TASK_COLUMN:
                    scores[TASK_COLUMN[task]] = _pct(cell["score"])
            rows[f"Blind: {BLIND_NAMES[name]}"] = scores
    return rows


def _blind_inputs(build: Path, split: str) -> tuple[list[dict], dict]:
    """(train rows' task and answer, T5/T6 image-rule letters of ``split``) of a local build: what
    the blind baselines and the blind floor are computed from (``baselines.json`` written by the
    build, which decodes the images)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    train = []
    for task in TASK_NAMES:
        for shard in checked_shards(build, task, "train"):
            train += pq.read_table(shard, columns=["task", "answer"]).to_pylist()
    try:
        stored = json.loads((build / "baselines.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    return train, (stored.get("image_answers") or {}).get(split) or {}

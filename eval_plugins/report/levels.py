"""Chance levels of a build for the report: the scorer's chance baselines, the blind baselines
(docs/decoys.md) and the blind floor (``scoring.floors``), scored on a build folder's split."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.registry import TASK_NAMES
from ...builder.core.rows import SCORE_COLUMNS
from ...builder.core.shards import checked_shards
from .reference import SCORER_KEY, TASK_COLUMN
from .sources import RANDOM_DRAWS, _empty, _pct, from_aggregate


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


def floor_level(build: Path, split: str, records: list[dict], seed: int = 0) -> tuple[dict, object]:
    """The build's blind floor on ``records`` as a report row (percent; ``scoring.floors``: the
    best blind baseline of each column, T4's halves included, on the same questions), and the
    floor itself."""
    from ...builder.scoring import floors  # noqa: PLC0415

    train, image_answers = _blind_inputs(build, split)
    floor = floors.blind_floor(records, train, image_answers, seed)["score"]
    scores = _empty()
    for column in scores:
        scores[column] = _pct(floor.values.get(SCORER_KEY.get(column, column)))
    return {FLOOR_NAME: scores}, floor


CHANCE_NAMES = {"random": "Chance: random answer", "always_no": "Chance: constant (No / None / A)"}


def chance_levels(build: str | Path, split: str = "test", seed: int = 0) -> ChanceLevels:
    """Score the scorer's baselines (``baseline_prediction``) on every question of ``split`` in a
    build folder; the random baseline is averaged over :data:`RANDOM_DRAWS` draws per question."""
    import numpy as np  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    from ...builder.scoring import BASELINE_KINDS, aggregate, baseline_prediction, score_prediction  # noqa: PLC0415

    build = Path(build)
    manifest_path = build / "manifest.json"
    if not manifest_path.is_file():
        raise MisiError(f"{build}: not a build folder (no manifest.json)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    records = []
    for task in TASK_NAMES:
        for shard in checked_shards(build, task, split):
            records += pq.read_table(shard, columns=list(SCORE_COLUMNS)).to_pylist()
    if not records:
        raise MisiError(f"{build}: no questions in split {split!r}")
    rows = {}
    for kind in BASELINE_KINDS:
        rng = np.random.default_rng(seed)
        metrics = []
        for rec in records:
            options = list(rec.get("options") or []) or None
            for _ in range(RANDOM_DRAWS if kind == "random" else 1):
                pred = baseline_prediction(kind, rec["task"], rec, rng)
                metrics.append(
                    (
                        rec["task"],
                        score_prediction(
                            rec["task"], pred, rec["answer"], rec["metadata"], options=options
                        ),
                    )
                )
        rows[CHANCE_NAMES.get(kind, kind)] = from_aggregate(aggregate(metrics))[0]
    rows.update(blind_levels(build, split, records, seed))
    floor_row, floor = floor_level(build, split, records, seed)
    rows.update(floor_row)
    return ChanceLevels(str(build), split, len(records), manifest.get("config_hash"), rows, floor)


def blind_levels(
    build: Path, split: str, records: list[dict], seed: int = 0
) -> dict[str, dict[str, float | None]]:
    """The blind baselines of a build (docs/decoys.md) as report rows: text only (fitted on the
    build's train split) and options only (best rule per choice task; T5/T6's image rule comes
    from the build's ``baselines.json``, written by the build, which decodes the images)."""
    from ...builder.scoring import BLIND_NAMES, blind_baselines, fit_text_only  # noqa: PLC0415

    train, image_answers = _blind_inputs(build, split)
    result = blind_baselines(records, fit_text_only(train) if train else None, image_answers, seed)
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

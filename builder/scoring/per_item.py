"""Per-question results as JSON Lines (``score --per-item``, ``per_item.jsonl`` in ``eval`` run
folders): so that a user can check how each free-form answer was read.

One object per question, in dataset order: ``id``, ``task``, ``complex`` (the row's
``pdb_id``: the resampling unit of the intervals, ``scoring.bootstrap``), ``gold`` (the gold answer),
``prediction`` (the model's text, None when missing), ``read_as`` (the answer as the scorer
read it, None when it could not be read or is missing), ``missing``, ``score`` and ``parts``
(the other per-question metrics: ``exact``, ``parsed`` and the task's parts, such as T7's
``rotation_part`` / ``move_part``), plus ``config_hash`` when the build's is known and, given
the dataset's provenance record (``core.provenance``), ``dataset``, ``revision`` and ``commit``:
each line names the release it was scored against.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from ..core.provenance import DatasetProvenance

__all__ = ["per_item_jsonl", "per_item_records"]


def per_item_records(
    per_item: Iterable[Mapping],
    config_hash: str | None = None,
    provenance: DatasetProvenance | None = None,
) -> list[dict]:
    """``score_records(...)["per_item"]`` as the objects described in the module docstring."""
    if provenance is not None:
        config_hash = config_hash or provenance.config_hash
    out = []
    for item in per_item:
        metrics = dict(item["metrics"])
        record = {
            "id": item["id"],
            "task": item["task"],
            "complex": item.get("complex"),
            "gold": item["answer"],
            "prediction": item["prediction"],
            "read_as": item["parsed"],
            "missing": bool(item["missing"]),
            "score": metrics.pop("score"),
            "parts": metrics,
        }
        if config_hash:
            record["config_hash"] = config_hash
        if provenance is not None:
            record.update(provenance.line_fields())
        out.append(record)
    return out


def per_item_jsonl(
    per_item: Iterable[Mapping],
    config_hash: str | None = None,
    provenance: DatasetProvenance | None = None,
) -> str:
    """The JSON Lines text of :func:`per_item_records` (UTF-8 kept, keys sorted)."""
    return "".join(
        json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
        for r in per_item_records(per_item, config_hash, provenance)
    )

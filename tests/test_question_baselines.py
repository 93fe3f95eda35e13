"""Issue 52: the per-question baselines a build stores (``question_baselines.npz``) and what
reads them: the stored route gives the numbers of the computed route on a real build's rows,
the file's bytes do not depend on anything but the values, a changed file is never read, and
``misi-bench score`` reads the file (and computes the values once without it)."""

from __future__ import annotations

import json
import logging
import math
import shutil

import numpy as np
import pytest
from misi_bench.builder import scoring
from misi_bench.builder.checks.blind import read_blind
from misi_bench.builder.core.registry import TASK_SPECS
from misi_bench.builder.core.rows import SCORE_COLUMNS
from misi_bench.builder.dataset.hub_probe import stored_question_baselines
from misi_bench.builder.scoring import floors
from misi_bench.builder.scoring import metrics as metrics_module
from misi_bench.builder.scoring import question_baselines as qb
from misi_bench.builder.store.parquet import iter_config_rows


def _rows(folder, split):
    columns = list(SCORE_COLUMNS)
    return [r for t in scoring.TASK_NAMES for r in iter_config_rows(folder, t, split, columns)]


def _floor_tuple(floor):
    return (
        dict(floor.values),
        dict(floor.rules),
        dict(floor.counts),
        {c: dict(v) for c, v in floor.items.items()},
        floor.paper_average,
    )


@pytest.mark.parametrize("split", ["test", "train"])
def test_stored_values_are_the_computed_ones_on_a_real_build(data_dir, split):
    rows, train = _rows(data_dir, split), _rows(data_dir, "train")
    stored = stored_question_baselines(str(data_dir), split)
    assert stored is not None and stored.ids == tuple(str(r["id"]) for r in rows)
    images = (read_blind(data_dir)["image_answers"] or {}).get(split)
    computed = scoring.reference_scores(rows, train, images)
    assert scoring.reference_cells(stored, rows) == computed
    assert "random" in computed and "text_only" in computed and "options_best" in computed
    built = floors.blind_floor(rows, train, images)
    from_file = floors.floors_of(stored)
    for metric in ("score", "exact"):
        assert _floor_tuple(from_file[metric]) == _floor_tuple(built[metric])
    # the first question's random value is the mean of the first 20 draws of a seed-0 generator
    rng = np.random.default_rng(qb.SEED)
    row = rows[0]
    draws = [
        scoring.score_prediction(
            row["task"],
            scoring.baseline_prediction("random", row["task"], row, rng),
            row["answer"],
            row["metadata"],
            options=list(row.get("options") or []) or None,
        )["score"]
        for _ in range(qb.RANDOM_DRAWS)
    ]
    assert stored.value("random", "score")[0] == math.fsum(draws) / len(draws)


def test_a_subset_reads_the_same_questions_values(data_dir):
    rows = _rows(data_dir, "test")
    stored = stored_question_baselines(str(data_dir), "test")
    halved = next(spec.name for spec in TASK_SPECS if spec.halves)  # T4: two columns
    other = next(t for t in scoring.TASK_NAMES if t != halved)
    some = [r for r in rows if r["task"] in (halved, other)]
    picked = stored.select([r["id"] for r in some])
    assert picked.ids == tuple(r["id"] for r in some)
    floor = floors.floors_of(picked)["score"]
    columns = {qb.COLUMN_KEYS[c] for c in picked.columns.tolist() if c >= 0}
    assert set(floor.rules) == columns and len(columns) == 3
    whole = floors.floors_of(stored)["score"]
    for column, rule in floor.rules.items():
        assert floor.values[column] == whole.values[column]  # a column is all its questions
        in_column = picked.columns == qb.COLUMN_KEYS.index(column)
        values = picked.value(rule, "score")[in_column].tolist()
        assert floor.values[column] == math.fsum(values) / len(values)
    assert stored.select(["no such id"]) is None


def test_file_bytes_depend_only_on_the_values(data_dir):
    rows = _rows(data_dir, "test")
    blind = read_blind(data_dir)
    one = qb.compute_question_baselines(rows, blind["text_model"], blind["image_answers"]["test"])
    two = qb.compute_question_baselines(rows, blind["text_model"], blind["image_answers"]["test"])
    assert qb.question_baselines_bytes({"test": one}) == qb.question_baselines_bytes({"test": two})
    # and the build wrote exactly these bytes for its split (among its other splits)
    stored = stored_question_baselines(str(data_dir), "test")
    for key, value in one.values.items():
        np.testing.assert_array_equal(stored.values[key], value)


def test_a_changed_file_is_not_read(data_dir, tmp_path, caplog):
    copy = tmp_path / "build"
    shutil.copytree(data_dir, copy)
    path = copy / qb.FILE
    data = bytearray(path.read_bytes())
    data[-30] ^= 0xFF
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        assert stored_question_baselines(str(copy), "test") is None
    assert "sha256 differs from manifest.json" in caplog.text
    path.unlink()
    assert stored_question_baselines(str(copy), "test") is None  # an older build: none


def test_metadata_is_parsed_once_per_row(data_dir, monkeypatch):
    row = next(r for r in _rows(data_dir, "test") if list(r.get("options") or []))
    metadata = str(row["metadata"])
    metrics_module._meta_of_text.cache_clear()  # earlier tests read the same text
    calls = []
    real = metrics_module.json.loads
    monkeypatch.setattr(metrics_module.json, "loads", lambda s: calls.append(1) or real(s))
    for letter in "ABCDABCD":
        scoring.score_prediction(row["task"], letter, row["answer"], metadata)
    assert len(calls) == 1  # json.loads, everywhere (the module is shared)


def _score(cli_args, dataset, preds, out):
    from misi_bench import main

    assert main(["score", "--dataset", str(dataset), "--predictions", str(preds), *cli_args,
                 "--json-out", str(out)]) == 0  # fmt: skip
    return json.loads(out.read_text(encoding="utf-8"))


def test_score_reads_the_file_and_computes_once_without_it(data_dir, tmp_path, caplog, capsys):
    rows = _rows(data_dir, "test")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows[::2]),
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING):
        stored = _score([], data_dir, preds, tmp_path / "a.json")
    assert qb.FILE not in caplog.text  # read, not computed
    copy = tmp_path / "older"
    shutil.copytree(data_dir, copy)
    (copy / qb.FILE).unlink()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        computed = _score([], copy, preds, tmp_path / "b.json")
    assert f"no {qb.FILE} in this build" in caplog.text
    capsys.readouterr()
    assert stored["baselines"] == computed["baselines"] and stored["baselines"]
    assert stored["blind_floor"] == computed["blind_floor"] and stored["blind_floor"]
    assert stored["blind_floor"]["score"]["margins"]


def test_the_shard_schema_is_datasets_own():
    from misi_bench.builder.store.parquet import arrow_schema, features

    ours, theirs = arrow_schema(), features().arrow_schema
    assert ours.equals(theirs, check_metadata=True)
    assert ours.metadata == theirs.metadata

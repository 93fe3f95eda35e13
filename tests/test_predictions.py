"""Prediction files (builder/scoring/predictions.py): every accepted shape, the missing /
duplicate / bad-entry rules, and a clear error for files that cannot be used."""

from __future__ import annotations

import json

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.scoring import (
    PredictionFileError,
    read_predictions,
    resolve_positions,
)

JSONL = '{"id": "a", "prediction": "move x 3"}\n{"id": "b", "prediction": "B"}\n'

READ_CASES = [
    # (case, file name, bytes, expected predictions, expected missing ids, duplicates, n bad, shape)
    ("jsonl", "p.jsonl", JSONL.encode(), {"a": "move x 3", "b": "B"}, (), (), 0, "jsonl"),
    (
        "jsonl with BOM",
        "p.jsonl",
        b"\xef\xbb\xbf" + JSONL.encode(),
        {"a": "move x 3", "b": "B"},
        (),
        (),
        0,
        "jsonl",
    ),
    (
        "non-object JSON lines are reported",
        "p.jsonl",
        (JSONL + '3\n[1, 2]\n"text"\n{not json\n').encode(),
        {"a": "move x 3", "b": "B"},
        (),
        (),
        4,
        "jsonl",
    ),
    (
        "null and absent prediction are missing",
        "p.jsonl",
        b'{"id": "a", "prediction": null}\n{"id": "b"}\n{"id": "c", "prediction": ""}\n',
        {"c": ""},
        ("a", "b"),
        (),
        0,
        "jsonl",
    ),
    (
        "duplicate ids: last wins, reported",
        "p.jsonl",
        b'{"id": "a", "prediction": "move x 1"}\n{"id": "a", "prediction": "move x 3"}\n',
        {"a": "move x 3"},
        (),
        ("a",),
        0,
        "jsonl",
    ),
    (
        "numeric ids and predictions",
        "p.jsonl",
        b'{"id": 7, "prediction": 3}\n',
        {"7": "3"},
        (),
        (),
        0,
        "jsonl",
    ),
    (
        "single JSONL line",
        "p.json",
        b'{"id": "a", "prediction": "C"}',
        {"a": "C"},
        (),
        (),
        0,
        "jsonl",
    ),
    (
        "JSON list of objects",
        "p.json",
        json.dumps([{"id": "a", "prediction": "C"}, 5, {"id": "b"}]).encode(),
        {"a": "C"},
        ("b",),
        (),
        1,
        "json-list",
    ),
    (
        "JSON id -> prediction object",
        "p.json",
        json.dumps({"a": "move x 3", "b": None, "c": ["A"]}).encode(),
        {"a": "move x 3", "c": "A"},
        ("b",),
        (),
        0,
        "json-object",
    ),
    (
        "bad prediction types reported",
        "p.jsonl",
        b'{"id": "a", "prediction": {"x": 1}}\n{"id": "b", "prediction": "A"}\n',
        {"b": "A"},
        (),
        (),
        1,
        "jsonl",
    ),
]


@pytest.mark.parametrize(
    "case,name,data,preds,missing,dups,n_bad,shape", READ_CASES, ids=[c[0] for c in READ_CASES]
)
def test_accepted_shapes(tmp_path, case, name, data, preds, missing, dups, n_bad, shape):
    path = tmp_path / name
    path.write_bytes(data)
    got = read_predictions(path)
    assert dict(got.predictions) == preds
    assert got.no_prediction == missing
    assert got.duplicate_ids == dups
    assert len(got.bad_entries) == n_bad, got.bad_entries
    assert got.shape == shape


UNUSABLE = [
    ("empty file", "p.jsonl", b"", "empty"),
    ("whitespace only", "p.jsonl", b"\n \n", "empty"),
    ("BOM only", "p.jsonl", b"\xef\xbb\xbf", "empty"),
    ("only non-object lines", "p.jsonl", b'3\n[1, 2]\n"text"\n', "no usable prediction"),
    ("list of non-objects", "p.json", b"[1, 2, 3]", "no usable prediction"),
    ("objects without ids", "p.jsonl", b'{"prediction": "A"}\n', "no usable prediction"),
    (
        "harness results summary",
        "results.json",
        b'{"results": {"misi": {"score,none": 0.5}}}',
        "results summary",
    ),
    ("plain text", "p.txt", b"move x 3\n", "no usable prediction"),
    ("table without columns", "p.tsv", b"index\tanswer\n0\tA\n", "'id' and 'prediction' columns"),
]


@pytest.mark.parametrize("case,name,data,message", UNUSABLE, ids=[c[0] for c in UNUSABLE])
def test_unusable_files_raise_one_clear_error(tmp_path, case, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(PredictionFileError) as err:
        read_predictions(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text
    assert isinstance(err.value, MisiError)  # the CLI turns it into one line and exit code 2


def test_missing_file(tmp_path):
    with pytest.raises(PredictionFileError, match="cannot read predictions"):
        read_predictions(tmp_path / "nope.jsonl")


def test_vlmevalkit_tables(tmp_path):
    tsv = tmp_path / "model_MiSI.tsv"
    tsv.write_text(
        '"index"\t"id"\t"question"\t"prediction"\n"0"\t"t1-0"\t"Q"\t"move x 3"\n"1"\t"t1-1"\t"Q"\t""\n',
        encoding="utf-8",
    )
    got = read_predictions(tsv)
    assert dict(got.predictions) == {"t1-0": "move x 3", "t1-1": ""} and got.shape == "table"
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["index", "id", "answer", "prediction"])
    sheet.append([0, "t9-0", "None", "None"])
    sheet.append([1, "t9-1", "None", None])
    xlsx = tmp_path / "model_MiSI.xlsx"
    book.save(xlsx)
    got = read_predictions(xlsx)
    # as in VLMEvalKit's own evaluation, an empty cell of an existing row is an empty answer
    assert dict(got.predictions) == {"t9-0": "None", "t9-1": ""} and got.no_prediction == ()


LMMS_LINES = [
    {
        "doc_id": 0,
        "target": "roll x 15",
        "filtered_resps": "roll x 15",
        "input": "Q0",
        "score": 1.0,
    },
    {
        "doc_id": 1,
        "target": "roll y -30",
        "filtered_resps": ["roll y 30"],
        "input": "Q1",
        "score": 0.5,
    },
    {"doc_id": 2, "target": "roll z 45", "filtered_resps": None, "input": "Q2"},
]
ROWS = [
    {"id": "rot-0", "answer": "roll x 15"},
    {"id": "rot-1", "answer": "roll y -30"},
    {"id": "rot-2", "answer": "roll z 45"},
]


def test_lmms_eval_samples_file(tmp_path):
    path = tmp_path / "20260101_samples_misi_rotation.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in LMMS_LINES), encoding="utf-8")
    got = read_predictions(path)
    assert got.shape == "lmms-eval-samples" and got.config == "rotation" and not got.predictions
    resolved = resolve_positions(got, ROWS)
    assert dict(resolved.predictions) == {"rot-0": "roll x 15", "rot-1": "roll y 30"}
    assert resolved.no_prediction == ("rot-2",)
    tiny = tmp_path / "x_samples_tiny_misi_pocket_ligand.jsonl"
    tiny.write_text(
        json.dumps({"doc_id": 0, "target": "None", "filtered_resps": ["None"]}) + "\n",
        encoding="utf-8",
    )
    assert read_predictions(tiny).config == "pocket_ligand"


def test_lmms_eval_samples_from_another_build_are_refused(tmp_path):
    path = tmp_path / "20260101_samples_misi_rotation.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in LMMS_LINES), encoding="utf-8")
    got = read_predictions(path)
    with pytest.raises(PredictionFileError, match="wrong config, split or build"):
        resolve_positions(got, [dict(r, answer="roll x 90") for r in ROWS])
    with pytest.raises(PredictionFileError, match="beyond the 2 rows"):
        resolve_positions(got, ROWS[:2])


def test_xlsx_reader_matches_openpyxl(tmp_path):
    """The scorer's standard-library .xlsx reader gives openpyxl's read-only cell values: text,
    numbers, booleans, gaps, a far cell that widens every row, and the active sheet only."""
    import openpyxl
    from misi_bench.builder.scoring.xlsx import read_xlsx_rows

    book = openpyxl.Workbook()
    first = book.active
    first.append(["ignored"])
    sheet = book.create_sheet("predictions")
    sheet.append(["index", "id", "prediction", "score", "flag"])
    sheet.append([0, "translation-1a28-000", "move x 3", 1.5, True])
    sheet.append([1, "docking-1a28-001", None, 2, False])
    sheet["G5"] = "Yes: ASN OD1, O1B; ARG NH2, O3"
    book.active = 1
    path = tmp_path / "preds.xlsx"
    book.save(path)
    active = openpyxl.load_workbook(path, read_only=True, data_only=True).active
    expected = [list(r) for r in active.iter_rows(values_only=True)]
    assert read_xlsx_rows(path) == expected
    assert expected[1][:3] == [0, "translation-1a28-000", "move x 3"]


def test_harness_log_that_keeps_the_row_is_read_by_its_id(tmp_path):
    """lm-eval's --log_samples lines keep the row (``doc``, without images): its ``id`` names the
    question and its ``config_hash`` the build, no position to resolve."""
    path = tmp_path / "samples_misi_rotation_2026-01-01.jsonl"
    lines = [
        {
            "doc_id": i,
            "doc": {"id": r["id"], "answer": r["answer"], "config_hash": "abc123"},
            "target": r["answer"],
            "filtered_resps": [f"Answer: {r['answer']}"],
        }
        for i, r in enumerate(ROWS)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    got = read_predictions(path)
    assert not got.positions and got.builds == ("abc123",)
    assert dict(got.predictions) == {r["id"]: f"Answer: {r['answer']}" for r in ROWS}


def test_lm_eval_samples_folder(tmp_path):
    """lm-eval names its sample logs samples_<task>_<date>.jsonl; a folder of them is read."""
    from misi_bench.builder.scoring import read_prediction_source

    folder = tmp_path / "out" / "model"
    folder.mkdir(parents=True)
    for stamp in ("2026-01-01T10-00-00.1", "2026-02-01T10-00-00.1"):
        (folder / f"samples_misi_rotation_{stamp}.jsonl").write_text(
            "".join(
                json.dumps({"doc_id": i, "doc": {"id": r["id"]}, "filtered_resps": [stamp]}) + "\n"
                for i, r in enumerate(ROWS)
            )
        )
    source = read_prediction_source(tmp_path / "out", "test")
    assert source.kind == "lmms-eval-folder" and len(source.files) == 1
    assert set(source.files[0].predictions.values()) == {"2026-02-01T10-00-00.1"}
    assert "passed over 1 older file(s)" in source.notes[0]


def _lmms_run(folder, date, config, model_args, answers):
    """One lmms-eval --log_samples run as lmms-eval lays it out: samples and results, one date."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{date}_samples_misi_{config}.jsonl").write_text(
        "".join(
            json.dumps({"doc_id": i, "target": "x", "filtered_resps": [a]}) + "\n"
            for i, a in enumerate(answers)
        )
    )
    config_block = {"model": "qwen2_5_vl", "model_args": model_args}
    (folder / f"{date}_results.json").write_text(json.dumps({"config": config_block}))


def test_a_folder_with_two_models_logs_is_refused_with_both_names(tmp_path):
    """lmms-eval nests each model's files in a folder of its own; a folder above two of them
    (or one folder holding two models' runs) is refused, naming both models, instead of scoring
    the newest file per config: a mix of two models."""
    from misi_bench.builder.scoring import read_prediction_source

    out = tmp_path / "results"
    _lmms_run(out / "Qwen__A", "20260101_1", "rotation", "pretrained=Qwen/A", ["A"])
    _lmms_run(out / "Qwen__B", "20260102_1", "zooming", "pretrained=Qwen/B,dtype=bf16", ["B"])
    with pytest.raises(PredictionFileError) as err:
        read_prediction_source(out)
    line = str(err.value)
    assert "holds the logs of 2 models" in line and "pass the folder of one model" in line
    assert "qwen2_5_vl (Qwen/A)" in line and "qwen2_5_vl (Qwen/B)" in line
    assert read_prediction_source(out / "Qwen__A").kind == "lmms-eval-folder"  # one model: read
    # two models' runs in one folder, named by their results files
    _lmms_run(out / "Qwen__A", "20260103_1", "rotation", "pretrained=Qwen/C", ["C"])
    with pytest.raises(PredictionFileError, match=r"Qwen/A.*Qwen/C"):
        read_prediction_source(out / "Qwen__A")
    # one model's runs, some without a results file (an interrupted run), are one model
    same = tmp_path / "same" / "Qwen__A"
    _lmms_run(same, "20260101_1", "rotation", "pretrained=Qwen/A", ["A"])
    _lmms_run(same, "20260102_1", "rotation", "pretrained=Qwen/A", ["A2"])
    (same / "20260102_1_results.json").unlink()
    assert len(read_prediction_source(same.parent).files) == 1
    # folders without results files: the folder names the model
    bare = tmp_path / "bare"
    for model in ("m1", "m2"):
        _lmms_run(bare / model, "20260101_1", "rotation", "", ["A"])
        (bare / model / "20260101_1_results.json").unlink()
    with pytest.raises(PredictionFileError, match=r"m1/ \(a folder without results files\)"):
        read_prediction_source(bare)
    # VLMEvalKit tables name their model before _MiSI
    vlm = tmp_path / "vlm"
    for model in ("GPT4o", "Qwen2.5-VL"):
        (vlm / model).mkdir(parents=True)
        (vlm / model / f"{model}_MiSI.tsv").write_text("id\tprediction\nx\tA\n")
    with pytest.raises(PredictionFileError, match=r"2 models.*GPT4o.*Qwen2\.5-VL"):
        read_prediction_source(vlm)

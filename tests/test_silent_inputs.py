"""Inputs that used to be taken silently (issue 39, parts 3 and 4): predictions that record no
build, harness sample logs without a target, a split CSV naming one complex twice, impossible
scores given to ``report``. Each is fed as a real file to the real reader or command."""

import json
import subprocess
import sys

import pytest
from misi_bench.builder.core.errors import InputError, MisiError
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.scoring import PredictionFileError, read_predictions, resolve_positions
from misi_bench.builder.store.parquet import iter_config_rows
from misi_bench.builder.store.split_files import read_split
from misi_bench.eval_plugins.report.sources import read_result


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A real build of four sample complexes, one config."""
    out = tmp_path_factory.mktemp("silent") / "build"
    build_dataset(
        source="samples",
        out=out,
        limit=4,
        tasks=["translation"],
        validate=False,
        audit=False,
        progress=False,
    )
    return out


def _score(built, preds):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
            "score",
            "--dataset",
            str(built),
            "--predictions",
            str(preds),
            "--configs",
            "translation",
            "--no-baselines",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


# --------------------------------------------------------------------- predictions and builds


def test_predictions_without_a_build_get_a_notice(built, tmp_path):
    """The documented {"id", "prediction"} JSONL records no build: it still scores, with one
    notice line saying that it could not be checked; with the build's config_hash it is quiet."""
    rows = list(iter_config_rows(built, "translation", "test", ["id", "answer"]))
    build = json.loads((built / "manifest.json").read_text())["config_hash"]
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        "".join(json.dumps({"id": r["id"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    out = _score(built, plain)
    assert out.returncode == 0, out.stderr
    notices = [ln for ln in out.stderr.splitlines() if "notice:" in ln]
    assert len(notices) == 1 and str(plain) in notices[0] and build in notices[0]
    assert "record no build" in notices[0]
    stamped = tmp_path / "stamped.jsonl"
    stamped.write_text(
        "".join(
            json.dumps({"id": r["id"], "prediction": r["answer"], "config_hash": build}) + "\n"
            for r in rows
        )
    )
    out = _score(built, stamped)
    assert out.returncode == 0, out.stderr
    assert "notice:" not in out.stderr and "recorded for build" not in out.stderr


def test_sample_log_without_target_is_refused(built, tmp_path):
    """lmms-eval samples read by position (no logged row): without ``target`` nothing ties a
    position to a row, so the file is refused with one line instead of scored blind."""
    rows = list(iter_config_rows(built, "translation", "test", ["id", "answer"]))
    log = tmp_path / "2026-01-01_samples_misi_translation.jsonl"
    log.write_text(
        "".join(
            json.dumps({"doc_id": k, "filtered_resps": [r["answer"]]}) + "\n"
            for k, r in enumerate(rows)
        )
    )
    file = read_predictions(log)
    with pytest.raises(PredictionFileError, match=r"doc_id 0 has no target.*cannot be checked"):
        resolve_positions(file, rows)
    # with the targets the positions are checked and resolved
    log.write_text(
        "".join(
            json.dumps({"doc_id": k, "target": r["answer"], "filtered_resps": [r["answer"]]}) + "\n"
            for k, r in enumerate(rows)
        )
    )
    resolved = resolve_positions(read_predictions(log), rows)
    assert resolved.predictions == {r["id"]: r["answer"] for r in rows}
    out = _score(built, log)
    assert out.returncode == 0, out.stderr
    log.write_text(json.dumps({"doc_id": 0, "target": None, "filtered_resps": ["x"]}) + "\n")
    with pytest.raises(PredictionFileError, match="has no target"):
        resolve_positions(read_predictions(log), rows)


# ------------------------------------------------------------------------------ split files


def test_split_csv_naming_one_complex_twice_is_refused(tmp_path):
    path = tmp_path / "split.csv"
    path.write_text("pdb_id,split\n1a28,train\n1hvr,test\n# note\n1A28,test\n")
    with pytest.raises(InputError, match=r"split\.csv: line 5: 1a28 is also on line 2") as err:
        read_split(path)
    assert "here test, there train" in str(err.value)
    path.write_text("pdb_id,split\n1a28,train\n1a28,train\n")
    with pytest.raises(InputError, match="line 3: 1a28 is also on line 2"):
        read_split(path)
    path.write_text("pdb_id,split\n1a28,train\n1hvr,test\n")
    assert read_split(path) == ({"1a28": "train", "1hvr": "test"}, "train")


# -------------------------------------------------------------------------- report's inputs


@pytest.mark.parametrize("value", [-5.0, 1.5, "inf"])
def test_report_refuses_impossible_scores(tmp_path, value):
    """An lmms-eval results file, a score report and a VLMEvalKit table with a score outside
    0-1 (drawn as -500% or 150% before) are refused, naming the file and the cell."""
    lmms = tmp_path / "model_results.json"
    lmms.write_text(
        json.dumps(
            {
                "results": {
                    "misi_translation": {"score,none": 0.5},
                    "misi_rotation": {"score,none": value},
                },
                "lmms_eval_version": "0.3",
            }
        )
    )
    with pytest.raises(
        MisiError, match=r"model_results\.json: results\.misi_rotation\.score,none holds"
    ):
        read_result(lmms)
    report = tmp_path / "run.score.json"
    report.write_text(json.dumps({"report": {"tasks": {"rotation": {"score": value, "n": 3}}}}))
    with pytest.raises(MisiError, match=r"run\.score\.json: tasks\.rotation\.score holds"):
        read_result(report)
    table = tmp_path / "m_MiSI_acc.csv"
    table.write_text(f"task,n,score,exact\ntranslation,3,0.5,0.5\nrotation,3,{value},0.1\n")
    with pytest.raises(MisiError, match=r"m_MiSI_acc\.csv: row rotation, column score holds"):
        read_result(table)
    with pytest.raises(MisiError, match="between 0 and 1"):
        read_result(tmp_path)  # the folder: the first such file refuses the lot


def test_report_reads_scores_at_the_bounds(tmp_path):
    lmms = tmp_path / "model_results.json"
    lmms.write_text(
        json.dumps(
            {
                "results": {
                    "misi_translation": {"score,none": 0.0},
                    "misi_rotation": {"score,none": 1.0},
                },
                "lmms_eval_version": "0.3",
            }
        )
    )
    (result,) = read_result(lmms)
    assert result.scores["T1"] == 0.0 and result.scores["T2"] == 100.0

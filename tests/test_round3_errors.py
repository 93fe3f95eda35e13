"""Issue 49, item 8: errors that point at the fix, as a new user meets them: the harness
launchers without their extra name the ``pip install``; predictions made on another revision
say ``add --revision TAG``; an lmms-eval folder without samples says ``--log_samples`` (and the
README's harness commands pass it); ``--split val`` lists the splits; a misspelt source or
config gets the name suggested. (The unreachable Hub: ``test_round3_push.py``.)"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from misi_bench.builder.cli.score_command import _warn_other_build
from misi_bench.builder.scoring import read_prediction_source
from misi_bench.builder.scoring.predictions import PredictionFileError

from cli_support import CLI, one_error_line

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **extra}
    env.pop("MISI_BENCH_DEBUG", None)
    return env


@pytest.mark.parametrize(
    "module, launcher, extra",
    [("lmms_eval", "lmms-eval", "lmms"), ("vlmeval", "vlmevalkit", "vlmevalkit"),
     ("lm_eval", "lm-eval", "lm-eval")],
)  # fmt: skip
def test_a_launcher_without_its_extra_names_the_pip_install(cli_build, module, launcher, extra):
    """The harness is hidden from the import system (as when its extra is not installed)."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "from misi_bench import main\n"
        f"sys.exit(main([{launcher!r}, '--tasks', 'misi_rotation', '--model', 'x']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=_env(MISI_BENCH_REPO=str(cli_build)),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    one_error_line(proc, f"pip install 'misi-bench[{extra}]'", f"misi-bench {launcher} needs")


def test_predictions_of_another_revision_say_add_revision(tmp_path, caplog):
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text(json.dumps({"id": "x", "prediction": "A"}) + "\n")
    dataset = {"dataset": "org/name", "revision": "v0.9.0", "commit": "c" * 40,
               "config_hash": "aaaa", "version": "v0.9.0"}  # fmt: skip
    (run / "report.json").write_text(json.dumps({"config_hash": "aaaa", "dataset": dataset}))
    (file,) = read_prediction_source(run).files
    assert file.revision == "v0.9.0" and file.builds == ("aaaa",)
    args = argparse.Namespace(dataset="org/name", revision=None, predictions=str(run))
    caplog.set_level(logging.WARNING)
    _warn_other_build(args, {"aaaa": file.revision}, "bbbb")
    assert "add --revision v0.9.0" in caplog.text and "is build bbbb" in caplog.text
    caplog.clear()
    _warn_other_build(args, {"aaaa": None}, "bbbb")  # a harness log: the tag is not recorded
    assert "add --revision TAG (the release they were made on)" in caplog.text


def test_an_lmms_eval_folder_without_samples_says_log_samples(tmp_path):
    folder = tmp_path / "results" / "qwen"
    folder.mkdir(parents=True)
    (folder / "20260101_120000_results.json").write_text(json.dumps({"results": {}}))
    with pytest.raises(PredictionFileError, match="again with --log_samples"):
        read_prediction_source(tmp_path / "results")


def test_the_readme_harness_commands_log_their_samples():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"misi-bench (?:lmms-eval|lm-eval) --model[^\n]*\n[^\n]*", text)
    assert len(commands) == 2, commands
    for command in commands:
        assert "--log_samples" in command and "--output_path" in command, command


@pytest.mark.parametrize(
    "args, words",
    [
        (["score", "--dataset", "{build}", "--predictions", "{preds}", "--split", "val"],
         ["--split 'val': no such split", "train, test, tiny"]),
        (["human", "{build}", "--split", "val", "--out", "{tmp}/h"],
         ["--split 'val': no such split", "train, test, tiny"]),
        (["report", "{preds}", "--dataset", "{build}", "--split", "val", "--out", "{tmp}/r.html"],
         ["--split 'val': no such split", "train, test, tiny"]),
        (["build", "--source", "sampels", "--out", "{tmp}/b"], ["did you mean samples?"]),
        (["eval", "--configs", "dockin", "--dataset", "{build}", "--base-url",
          "http://127.0.0.1:9/v1", "--model", "m", "--out", "{tmp}/e"],
         ["did you mean docking?"]),
    ],
)  # fmt: skip
def test_misspelt_names_get_the_right_one(cli_build, tmp_path, args, words):
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "x", "prediction": "A"}) + "\n")
    values = {"build": str(cli_build), "preds": str(preds), "tmp": str(tmp_path)}
    argv = [a.format(**values) for a in args]
    proc = subprocess.run([*CLI, *argv], env=_env(), capture_output=True, text=True, timeout=300)
    one_error_line(proc, *words)

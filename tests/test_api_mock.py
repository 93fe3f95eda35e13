"""``misi-bench serve-mock``: the stand-in model for smoke tests (the tests' protocol double with
the build's rows behind it; a double, not a model), checked through ``misi-bench eval`` and
through plain requests as a harness would send them, on the shared real sample build."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.builder.scoring import baseline_prediction, score_records
from misi_bench.eval_plugins.api.mock import MockAnswers
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

import misi_bench
from cli_support import CLI


def _rows(data_dir, columns=("id", "task", "answer", "metadata", "options")):
    rows = []
    for task in TASK_NAMES:
        for shard in sorted((Path(data_dir) / task).glob("test-*.parquet")):
            rows.extend(pq.read_table(shard, columns=list(columns)).to_pylist())
    return rows


def _eval(url, data_dir, out) -> dict:
    args = ["eval", "--base-url", url, "--model", "mock", "--dataset", str(data_dir)]
    assert misi_bench.main([*args, "--out", str(out), "--no-progress"]) == 0
    return json.loads((Path(out) / "report.json").read_text())


def test_serve_mock_gold_scores_every_task_fully(data_dir, tmp_path):
    """The command prints its URL on 127.0.0.1; `eval` against --answers gold gets every
    question of every task right (rows that share a question text are told apart)."""
    proc = subprocess.Popen(
        [*CLI, "serve-mock", str(data_dir), "--answers", "gold"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stdout.readline()
        url = proc.stdout.readline().strip()
        assert "gold answers" in banner and url.startswith("http://127.0.0.1:"), banner
        assert url.endswith("/v1")
        report = _eval(url, data_dir, tmp_path / "gold")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    rows = _rows(data_dir)
    assert len(report["per_item"]) == len(rows) and report["missing"] == []
    assert all(item["metrics"]["score"] == 1.0 for item in report["per_item"])
    assert {item["task"] for item in report["per_item"]} == set(TASK_NAMES)
    assert report["report"]["paper_average"] == pytest.approx(1.0)


@pytest.mark.parametrize("mode,kind", [("random", "random"), ("constant", "always_no")])
def test_serve_mock_random_and_constant_are_the_chance_baselines(data_dir, tmp_path, mode, kind):
    """What `eval` gets from --answers random/constant is, question for question, the chance
    baseline's answer (drawn per question id from the seed), so its scores are chance level."""
    mock = MockAnswers(str(data_dir), mode, seed=3)
    with DoubleServer(Double(answer_request=mock.answer)) as srv:
        report = _eval(srv.url, data_dir, tmp_path / mode)
    rows = _rows(data_dir)
    want = {
        r["id"]: baseline_prediction(
            kind, r["task"], r, np.random.default_rng([3, zlib.crc32(r["id"].encode())])
        )
        for r in rows
    }
    direct = score_records(rows, want)
    assert report["report"] == direct["report"]
    assert [i["prediction"] for i in report["per_item"]] == [want[r["id"]] for r in rows]
    assert 0 < report["report"]["average_all_tasks"] < 0.6 and mock.counts["ambiguous"] == 0


def test_serve_mock_matches_questions_as_harnesses_send_them(data_dir):
    """No question header, the text wrapped in a harness's image token and answer cue, the
    pictures re-encoded as JPEG: still each question's gold answer."""
    from PIL import Image

    mock = MockAnswers(str(data_dir), "gold")
    rows = _rows(data_dir, columns=("id", "task", "answer", "question", "images"))
    texts = [r["question"] for r in rows]
    assert len(set(texts)) < len(texts)  # some questions share their text: pictures decide
    for row in rows:
        content = []
        for img in row["images"]:
            buf = io.BytesIO()
            Image.open(io.BytesIO(img["bytes"])).convert("RGB").save(buf, "JPEG", quality=85)
            url = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()
            content.append({"type": "image_url", "image_url": {"url": url}})
        content.append({"type": "text", "text": "<image>\n" + row["question"] + "\nAnswer:"})
        request = {"model": "mock", "messages": [{"role": "user", "content": content}]}
        assert mock.answer("", request) == row["answer"], row["id"]
    assert mock.counts["matched"] == len(rows) and mock.counts["unmatched"] == 0
    other = {"messages": [{"role": "user", "content": "What is the capital of France?"}]}
    assert mock.answer("", other) == "" and mock.counts["unmatched"] == 1


@pytest.mark.slow
def test_serve_mock_checks_a_harness_route_lm_eval(data_dir, tmp_path):
    """lm-eval's OpenAI-compatible client (`local-chat-completions`, all images) against the
    gold mock: the group's paper_average is 1, every request matched its own question."""
    mock = MockAnswers(str(data_dir), "gold")
    env = {
        **os.environ,
        "MISI_BENCH_REPO": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    with DoubleServer(Double(answer_request=mock.answer)) as srv:
        proc = subprocess.run(
            [
                *CLI,
                "lm-eval",
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model=mock,base_url={srv.url}/chat/completions,max_images=11",
                "--tasks",
                "tiny_misi",
                "--apply_chat_template",
                "--output_path",
                str(tmp_path / "out"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (results,) = (tmp_path / "out").rglob("results_*.json")
    group = json.loads(results.read_text())["results"]["tiny_misi"]
    assert group["paper_average,none"] == pytest.approx(1.0)
    assert group["score,none"] == pytest.approx(1.0)
    assert mock.counts["matched"] > 0 and set(mock.counts) == {"matched"}

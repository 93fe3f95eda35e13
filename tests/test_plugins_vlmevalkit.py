"""VLMEvalKit integration, end to end: registration, then VLMEvalKit's own runner (in a
subprocess, registered in that process) on a small dataset folder with an oracle and a constant
model; scores are read back from the runner's result files."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

ensure_torchvision_importable()  # CPU-only torch next to PyPI's CUDA torchvision (see module)
import importlib.util  # noqa: E402

# the extra is installed in CI: a missing harness must fail, not skip (found, not imported here:
# importing vlmeval turns TLS verification off process-wide)
assert importlib.util.find_spec("vlmeval") is not None, "pip install 'misi-bench[vlmevalkit]'"

from misi_bench.eval_plugins.common import TASKS, score_doc_raw
from misi_bench.eval_plugins.vlmevalkit.datasets import DATASET_NAMES, parse_name

from harness_support import expected_averages, expected_block, same_figure  # noqa: E402


@pytest.fixture(scope="module")
def env(data_dir, tmp_path_factory) -> dict:
    cache = tmp_path_factory.mktemp("cache")
    (cache / "lmu").mkdir()
    return {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "MISI_BENCH_REPO": str(data_dir),
        "LMUData": str(cache / "lmu"),
        "HF_HOME": str(cache / "hf"),
        "HF_DATASETS_CACHE": str(cache / "hf" / "datasets"),
    }


def test_names():
    assert len(DATASET_NAMES) == 2 * (len(TASKS) + 1)
    assert parse_name("MiSI_rotation") == ("rotation", "test")
    assert parse_name("MiSI_tiny") == (None, "tiny")
    with pytest.raises(KeyError):
        parse_name("MiSI_nope")


def _run(
    env, work: Path, models: list[str], data: list[str], constant: str = "A"
) -> subprocess.CompletedProcess:
    # Registration and the runner share one process, as `misi-bench vlmevalkit` does.
    script = textwrap.dedent("""
        import sys
        from misi_bench.eval_plugins import vlmevalkit
        names = vlmevalkit.register()
        import vlmeval.dataset as vd
        from misi_bench.eval_plugins.vlmevalkit import oracle
        oracle.register()
        assert set(names) <= set(vd.SUPPORTED_DATASETS)
        ds = vd.build_dataset("MiSI_docking")
        msgs = ds.build_prompt(ds.data.iloc[0])
        assert [m["type"] for m in msgs] == ["image"] * 7 + ["text"], msgs
        sys.exit(vlmevalkit.run(sys.argv[1:]))
    """)
    args = ["--data", *data, "--model", *models, "--work-dir", str(work)]
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        check=False,
        env={**env, "MISI_CONSTANT_ANSWER": constant},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return proc


def _acc(work: Path, model: str, data: str) -> dict[str, float]:
    import pandas as pd

    path = work / model / f"{model}_{data}_acc.csv"
    assert path.exists(), sorted(str(p) for p in work.rglob("*"))
    table = pd.read_csv(path)
    return dict(zip(table["task"], table["score"]))


@pytest.mark.slow
def test_vlmevalkit_runner_oracle_and_constant(env, data_dir, tmp_path):
    import datasets

    constant = "move x 3"
    proc = _run(
        env, tmp_path, ["misi_oracle", "misi_constant"], ["MiSI", "MiSI_rotation_tiny"], constant
    )
    oracle = _acc(tmp_path, "misi_oracle", "MiSI")
    for task in TASKS:
        assert oracle[task] == 1.0, (task, proc.stdout[-3000:])
    assert (
        oracle["average_all_tasks"] == 1.0
        and oracle["average_headline_tasks"] == 1.0
        and oracle["paper_average"] == 1.0
    )
    assert _acc(tmp_path, "misi_oracle", "MiSI_rotation_tiny")["rotation"] == 1.0
    report = json.loads((tmp_path / "misi_oracle" / "misi_oracle_MiSI_report.json").read_text())
    assert report["subsets"]  # T4 positive / negative rows
    # the work dir is a predictions source; its tables keep the rows' config_hash column
    from misi_bench.builder.scoring import read_prediction_source

    build = json.loads((data_dir / "manifest.json").read_text())["config_hash"]
    source = read_prediction_source(tmp_path / "misi_oracle", "test")
    assert source.kind == "vlmevalkit-folder" and source.files
    assert all(f.builds == (build,) for f in source.files), [f.builds for f in source.files]

    const = _acc(tmp_path, "misi_constant", "MiSI")
    expected = {}
    for task in TASKS:
        rows = datasets.load_dataset(str(data_dir), task, split="test")
        scores = [score_doc_raw(r, constant)["score"] for r in rows]
        expected[task] = math.fsum(scores) / len(scores)
        assert const[task] == pytest.approx(expected[task]), task
    assert const["average_all_tasks"] == pytest.approx(sum(expected.values()) / len(expected))
    want = expected_averages(data_dir, 10**9, lambda row: constant)
    assert same_figure(const["paper_average"], want["paper_average"])
    assert same_figure(const["average_headline_tasks"], want["average_headline_tasks"])
    # the table's interval columns: the scorer's block for the same answers
    import pandas as pd

    stats = expected_block(data_dir, 10**9, lambda row: constant)["statistics"]
    table = pd.read_csv(tmp_path / "misi_constant" / "misi_constant_MiSI_acc.csv")
    by = {r["task"]: r for r in table.to_dict("records")}
    for name in (*TASKS, "paper_average", "average_all_tasks"):
        if name in stats:
            got = [by[name]["ci95_low"], by[name]["ci95_high"], by[name]["se"]]
            assert got == pytest.approx([*stats[name]["ci95"], stats[name]["se"]]), name


def test_run_summary_headline_is_paper_average():
    """VLMEvalKit's run summary takes one "primary metric" from the flattened ``_acc`` table
    (keys ``task=<row>|score``, as ``vlmeval.smp.status_report.flatten_summary_metrics`` writes
    them); left to itself it picks ``average_headline_tasks``. Ours is the headline, ``paper_average``,
    and a one-task dataset (no paper average) reports its task's score."""
    from misi_bench.eval_plugins.vlmevalkit.datasets import primary_metric

    flat = {
        "task=rotation|n": 3,
        "task=rotation|score": 0.5,
        "task=paper_average|score": 0.42,
        "task=average_all_tasks|score": 0.4,
        "task=average_headline_tasks|score": 0.41,
    }
    assert primary_metric(flat, None) == {"paper_average": 0.42}
    one_task = {**flat, "task=paper_average|score": float("nan")}
    assert primary_metric(one_task, "rotation") == {"rotation score": 0.5}
    assert primary_metric({}, None) == {} and primary_metric(None, "rotation") == {}

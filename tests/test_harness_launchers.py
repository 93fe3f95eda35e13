"""``misi-bench lmms-eval|vlmevalkit|lm-eval`` fail loudly: unknown MiSI names and unresolvable
data locations are refused before the harness starts (exit 2, one line), a run in which the
harness reports no results for a requested MiSI task exits 1 (the harnesses themselves exit 0),
and ``misi-bench lm-eval`` applies the torchvision shim so that ``--model hf-multimodal`` runs (a
tiny randomly initialised model built in the test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from misi_bench.eval_plugins import preflight
from misi_bench.eval_plugins.common import TASKS

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MISI_BENCH_")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(tmp / "hf"),
            "LMUData": str(tmp / "lmu"),
            "MISI_BENCH_CACHE": str(tmp / "cache"),
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    env.update(extra)
    return env


def _misi(env: dict, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys, misi_bench; sys.exit(misi_bench.main())", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=env.get("HF_HOME", "."),
    )


def _last_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("misi-bench ")]
    assert lines, proc.stdout[-2000:] + proc.stderr[-3000:]
    return lines[-1]


# ---- the checks themselves ---------------------------------------------------------------


def test_option_values_reads_every_spelling():
    argv = ["--model", "x", "--tasks", "misi_*,mmmu", "tiny_misi", "--limit", "2", "-t=misi"]
    assert preflight.option_values(argv, "--tasks", "-t") == ["misi_*", "mmmu", "tiny_misi", "misi"]
    assert preflight.option_values(["--tasks=misi"], "--tasks") == ["misi"]
    assert preflight.option_values(["--model", "x"], "--tasks") is None


def test_requested_names_expand_and_unknown_ones_are_refused():
    names, groups = preflight.task_names()
    ours = preflight.names_misi
    assert preflight.expand_requested(["misi_rot*", "mmmu"], names, groups, ours) == [
        "misi_rotation",
        "misi_rotation_rotation",
    ]
    assert set(preflight.expand_requested(["misi"], names, groups, ours)) == {
        "misi",
        *(f"misi_{t}" for t in TASKS),
    }
    assert preflight.expand_requested(["mmmu"], names, groups, ours) == []
    with pytest.raises(
        preflight.PreflightError, match="'misi_rotaton': did you mean misi_rotation"
    ):
        preflight.expand_requested(["misi_rotaton"], names, groups, ours)
    with pytest.raises(
        preflight.PreflightError, match="no MiSI-Bench task named 'misi_nothing_\\*'"
    ):
        preflight.expand_requested(["misi_nothing_*"], names, groups, ours)


def test_a_tasks_value_that_produced_no_results_is_unmatched(tmp_path):
    """lmms-eval and lm-eval exit 0 when ``--tasks`` matches nothing (a pattern matching no
    name: no task at all; an unknown name: an error they log): the launchers then exit 1."""
    unmatched = preflight.unmatched_requests
    assert unmatched(["mmm*", "nosuch"], []) == ["mmm*", "nosuch"]  # no evaluation returned
    assert unmatched(["list"], []) == [] and unmatched([], []) == []  # a listing, no --tasks
    assert unmatched(["mmm*"], [None]) == []  # a non-main rank returns nothing
    got = [["misi", "misi_rotation", "mmmu_val"]]
    assert unmatched(["mmm*", "misi", "ocr*", "[q]x"], got) == ["ocr*", "[q]x"]
    yaml_path = tmp_path / "t*.yaml"
    yaml_path.write_text("task: x\n")  # a task file whose name happens to look like a glob
    assert unmatched([str(yaml_path)], got) == []
    line = preflight.unmatched_message("lmms-eval", ["ocr*"])
    assert "--tasks ocr*" in line and "misi-bench lmms-eval --tasks list" in line


def test_the_launchers_print_the_groups_averages_in_percent():
    """The harness tables are 0-1 and show each task's share under ``paper_average``; after a run
    the launchers print the group's three averages in %, the headline named as such."""
    results = {
        "results": {
            "misi": {"paper_average,none": 0.8125, "score,none": 0.75, "exact,none": 0.5},
            "misi_translation": {"paper_average,none": 0.875, "score,none": 1.0},
        },
        "groups": {"tiny_misi": {"paper_average,none": float("nan"), "score,none": 0.5}},
    }
    lines = preflight.headline_lines(results)
    assert lines[0].startswith(
        "group misi: paper_average (the headline) 81.25 %, average_all_tasks 75.00 %;"
    )
    assert "only that task's share of the headline" in lines[0]
    assert lines[1].startswith("group tiny_misi: average_all_tasks 50.00 %;")  # NaN left out
    assert preflight.headline_lines(None) == [] and preflight.headline_lines({"results": {}}) == []
    # with the scorer's interval block (misi_intervals, added by the launcher): the headline's
    stats = {"paper_average": {"ci95": [0.7, 0.9]}, "average_all_tasks": {"ci95": [0.6, 0.85]}}
    results["misi_intervals"] = {"test": {"statistics": stats}}
    line = preflight.headline_lines(results)[0]
    assert line.startswith(
        "group misi: paper_average (the headline) 81.25 % [95% 70.00, 90.00], "
        "average_all_tasks 75.00 % [95% 60.00, 85.00];"
    )


def test_data_location_checks(tmp_path, data_dir, monkeypatch):
    assert preflight.check_data_location(str(data_dir)) == f"local folder {data_dir.resolve()}"
    (tmp_path / "empty").mkdir()
    with pytest.raises(preflight.PreflightError, match="no manifest.json"):
        preflight.check_data_location(str(tmp_path / "empty"))
    with pytest.raises(
        preflight.PreflightError, match="neither an existing folder nor a Hub repo id"
    ):
        preflight.check_data_location(str(tmp_path / "nowhere" / "x"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        preflight.PreflightError,
        match="is the Hub repo misi-bench/misi-bench but HF_HUB_OFFLINE is set",
    ):
        preflight.check_data_location("misi-bench/misi-bench")
    # a Hub that cannot be reached (a closed local port stands in for a network without the Hub)
    import huggingface_hub.constants

    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(
        preflight.PreflightError,
        match="cannot reach the Hub repo misi-bench/misi-bench at revision v1",
    ):
        preflight.check_data_location("misi-bench/misi-bench", "v1")


# ---- refusals through the command line (before any harness import) ------------------------


@pytest.mark.parametrize(
    "harness,args,expected",
    [
        (
            "lmms-eval",
            ["--model", "dummy", "--tasks", "misi_rotaton"],
            "misi-bench lmms-eval: no MiSI-Bench task named 'misi_rotaton'",
        ),
        (
            "lm-eval",
            ["--model", "hf", "--tasks", "misi", "tiny_misi_zoom"],
            "misi-bench lm-eval: no MiSI-Bench task named 'tiny_misi_zoom'",
        ),
        (
            "vlmevalkit",
            ["--data", "MiSI_rotations", "--model", "x"],
            "misi-bench vlmevalkit: no MiSI-Bench task named 'MiSI_rotations'",
        ),
        (
            "lmms-eval",
            ["--model", "dummy", "--tasks", "misi"],
            "is the Hub repo misi-bench/misi-bench but HF_HUB_OFFLINE is set",
        ),
        (
            "vlmevalkit",
            ["--data", "MiSI_tiny", "--model", "x"],
            "is the Hub repo misi-bench/misi-bench but HF_HUB_OFFLINE is set",
        ),
    ],
)
def test_launchers_refuse_before_starting_the_harness(tmp_path, harness, args, expected):
    env = _env(tmp_path)
    (tmp_path / "hf").mkdir()
    proc = _misi(env, harness, *args, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert expected in _last_line(proc)
    assert "Traceback" not in proc.stderr


# ---- runs in which the harness reports no results -----------------------------------------


@pytest.fixture(scope="module")
def broken_data(data_dir, tmp_path_factory) -> Path:
    """The small build with the docking shards removed (its manifest still lists them)."""
    out = tmp_path_factory.mktemp("broken") / "data"
    shutil.copytree(data_dir, out)
    shutil.rmtree(out / "docking")
    return out


@pytest.mark.slow
def test_lmms_eval_exits_non_zero_when_a_task_has_no_results(tmp_path, broken_data):
    (tmp_path / "hf").mkdir()
    env = _env(tmp_path, MISI_BENCH_REPO=str(broken_data))
    proc = _misi(
        env,
        "lmms-eval",
        "--model",
        "dummy",
        "--model_args",
        "response=A",
        "--tasks",
        "misi_docking,misi_rotation",
        "--limit",
        "1",
        "--verbosity",
        "WARNING",
    )
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = _last_line(proc)
    # lmms-eval stops the whole run when one task cannot load, so both tasks are named
    assert line.startswith("misi-bench lmms-eval: no results for ") and "misi_docking" in line, line
    assert str(broken_data) in line and "--verbosity DEBUG" in line


@pytest.mark.slow
def test_lmms_eval_exits_non_zero_when_a_tasks_pattern_matches_nothing(tmp_path, data_dir):
    """lmms-eval logs "no tasks found" and exits 0 for a pattern that matches nothing; ours: 1."""
    (tmp_path / "hf").mkdir()
    env = _env(tmp_path, MISI_BENCH_REPO=str(data_dir))
    args = ["lmms-eval", "--model", "dummy", "--model_args", "response=A", "--limit", "1"]
    proc = _misi(env, *args, "--tasks", "nosuchtask_*", "--verbosity", "WARNING")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert _last_line(proc).startswith("misi-bench lmms-eval: no results for --tasks nosuchtask_*")


@pytest.mark.slow
def test_vlmevalkit_exits_non_zero_when_a_pair_is_not_scored(tmp_path, broken_data):
    (tmp_path / "hf").mkdir()
    (tmp_path / "lmu").mkdir()
    env = _env(tmp_path, MISI_BENCH_REPO=str(broken_data), MISI_CONSTANT_ANSWER="A")
    script = textwrap.dedent("""
        import sys
        from misi_bench.eval_plugins import vlmevalkit
        vlmevalkit.register()
        from misi_bench.eval_plugins.vlmevalkit import oracle
        oracle.register()
        sys.exit(vlmevalkit.run(sys.argv[1:]))
    """)
    # a --config file (the form API models need), naming our classes as VLMEvalKit attributes
    config = {
        "model": {"misi_constant": {}},
        "data": {
            f"MiSI_{t}_tiny": {"class": f"MiSI_{t}", "dataset": f"MiSI_{t}_tiny"}
            for t in ("docking", "rotation")
        },
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "--config",
            str(tmp_path / "config.json"),
            "--work-dir",
            str(tmp_path / "work"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]
    line = _last_line(proc)
    assert "no results for misi_constant x MiSI_docking_tiny (1 of 2" in line, line


# ---- lm-eval: the shim lets hf-multimodal run ----------------------------------------------


@pytest.mark.slow
def test_lm_eval_hf_multimodal_runs_a_tiny_random_model(tmp_path, data_dir):
    """``misi-bench lm-eval --model hf-multimodal`` on a tiny randomly initialised Qwen2-VL built
    here (no download): the run completes and reports the task (without the shim, ``import
    torchvision`` fails on a CPU-only torch next to PyPI's CUDA torchvision)."""
    from harness_support import tiny_qwen2_vl

    model = tiny_qwen2_vl(tmp_path / "tiny-qwen2-vl")
    (tmp_path / "hf").mkdir()
    env = _env(tmp_path, MISI_BENCH_REPO=str(data_dir))
    out = tmp_path / "out"
    proc = _misi(
        env,
        "lm-eval",
        "--model",
        "hf-multimodal",
        "--model_args",
        f"pretrained={model}",
        "--tasks",
        "misi_rotation",
        "--limit",
        "1",
        "--apply_chat_template",
        "--gen_kwargs",
        "max_gen_toks=8",
        "--output_path",
        str(out),
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-3000:]
    assert "torchvision::nms" not in text
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    assert results["n-samples"]["misi_rotation"]["effective"] == 1
    assert 0.0 <= results["results"]["misi_rotation"]["score,none"] <= 1.0
    # the launcher put the scorer's interval block and standard error into lm-eval's own file
    block = results["misi_intervals"]["test"]
    assert block["resamples"] == 2000 and block["statistics"]["rotation"]["n"] == 1
    se = block["statistics"]["rotation"]["se"]
    assert results["results"]["misi_rotation"]["score_stderr,none"] == se

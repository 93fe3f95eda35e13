"""lmms-eval integration, end to end: task registration, then real runs of lmms-eval's command
line (in a subprocess) on a small dataset folder with an oracle and a constant model; scores are
read back from lmms-eval's own results JSON."""

from __future__ import annotations

import glob
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
import lmms_eval  # noqa: E402,F401  (the extra is installed in CI; a missing harness must fail, not skip)
from misi_bench.builder.core.registry import TASK_BY_NAME  # noqa: E402
from misi_bench.eval_plugins.common import TASKS, score_doc
from misi_bench.eval_plugins.lmms_eval import cli

from harness_support import expected_averages, expected_block, same_figure

LIMIT = 2
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def env(data_dir, tmp_path_factory) -> dict:
    cache = tmp_path_factory.mktemp("cache")
    return {
        **os.environ,
        **OFFLINE,
        "MISI_BENCH_REPO": str(data_dir),
        "MISI_BENCH_CACHE": str(cache / "misi"),
        "HF_HOME": str(cache / "hf"),
        "HF_DATASETS_CACHE": str(cache / "hf" / "datasets"),
    }


def _check_task_index(monkeypatch, data_dir, include_defaults: bool) -> None:
    from lmms_eval.tasks import TaskManager

    monkeypatch.setenv("MISI_BENCH_REPO", str(data_dir))
    tm = TaskManager("ERROR", include_path=cli.include_path(), include_defaults=include_defaults)
    ours = sorted(t for t in tm.all_tasks if "misi" in t)
    assert sorted(tm.match_tasks(["misi_*"])) == sorted(f"misi_{t}" for t in TASKS)
    assert set(ours) == {f"misi_{t}" for t in TASKS} | {f"tiny_misi_{t}" for t in TASKS} | {
        "misi",
        "tiny_misi",
    }
    assert tm.task_index["misi"]["type"] == "group"


def test_task_folder_registers_nine_tasks_and_groups(monkeypatch, data_dir):
    """lmms-eval's own TaskManager indexes our folder (only ours: the fast lane)."""
    _check_task_index(monkeypatch, data_dir, include_defaults=False)


@pytest.mark.slow  # lmms-eval's whole index (about 2,000 tasks: 62 s on a loaded machine)
def test_task_folder_beside_every_lmms_eval_task(monkeypatch, data_dir):
    """Beside lmms-eval's own tasks: the same names, none shadowed, ``misi_*`` matches ours."""
    _check_task_index(monkeypatch, data_dir, include_defaults=True)


def test_include_path_follows_the_data_location(monkeypatch, tmp_path, data_dir):
    monkeypatch.delenv("MISI_BENCH_REPO", raising=False)
    monkeypatch.delenv("MISI_BENCH_REVISION", raising=False)
    assert cli.include_path() == str(cli.TASKS_ROOT)  # the canonical repo: the shipped folder
    monkeypatch.setenv("MISI_BENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("MISI_BENCH_REPO", "someone/misi-fork")
    monkeypatch.setenv("MISI_BENCH_REVISION", "v1.0")
    rendered = Path(cli.include_path())
    template = (rendered / "misi" / cli.TEMPLATE).read_text()
    assert 'dataset_path: "someone/misi-fork"' in template and 'revision: "v1.0"' in template
    assert cli.include_path() == str(rendered)  # stable
    monkeypatch.setenv("MISI_BENCH_REPO", str(data_dir))
    monkeypatch.delenv("MISI_BENCH_REVISION")
    assert (
        f'dataset_path: "{data_dir}"'
        in (Path(cli.include_path()) / "misi" / cli.TEMPLATE).read_text()
    )
    argv = cli.build_argv(["--model", "dummy", "--tasks", "misi"])
    assert argv[-2:] == ["--include_path", cli.include_path()]
    assert cli.build_argv(["tasks", "list"]) == ["tasks", "list"]


def test_hooks_give_images_in_order_and_score_gold(data_dir):
    import datasets
    from misi_bench.eval_plugins.lmms_eval.tasks.misi import utils

    ds = datasets.load_dataset(str(data_dir), "docking", split="test")
    doc = ds[0]
    visuals = utils.misi_doc_to_visual(doc)
    assert len(visuals) == len(doc["image_views"]) and all(v.mode == "RGB" for v in visuals)
    assert utils.misi_doc_to_text(doc) == doc["question"]
    content = utils.misi_doc_to_messages(doc)[0]["content"]
    assert [c["type"] for c in content] == ["image"] * len(visuals) + ["text"]
    assert utils.misi_process_results(doc, [doc["answer"]])["score"] == 1.0
    assert utils.misi_process_results(doc, ["I cannot tell."])["score"] == 0.0


def _run_lmms(env, out: Path, model_lines: str, tasks: str, extra: tuple[str, ...] = ()) -> dict:
    script = textwrap.dedent(f"""
        import sys
        from misi_bench.eval_plugins.lmms_eval import cli
        from misi_bench.eval_plugins.lmms_eval.models import misi_oracle as oracle
        oracle.register()
        {model_lines}
        sys.exit(cli.run(sys.argv[1:]))
    """)
    args = [
        "--tasks",
        tasks,
        "--limit",
        str(LIMIT),
        "--output_path",
        str(out),
        "--verbosity",
        "WARNING",
        *extra,
    ]
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    files = glob.glob(str(out / "**" / "*results.json"), recursive=True)
    # lmms-eval logs errors and still exits 0 (lmms_eval/__main__.py cli_evaluate), so the
    # results file is the real check.
    assert proc.returncode == 0 and files, proc.stdout[-4000:] + proc.stderr[-4000:]
    if "misi" in tasks.split(","):  # the launcher prints the group's averages in %
        assert "misi-bench lmms-eval: group misi: " in proc.stderr, proc.stderr[-3000:]
    return json.loads(Path(files[0]).read_text())


@pytest.mark.slow
def test_lmms_eval_oracle_scores_one(env, data_dir, tmp_path):
    res = _run_lmms(
        env,
        tmp_path,
        "sys.argv[1:1] = ['--model', 'misi_oracle']",
        "misi,tiny_misi_rotation",
        ("--log_samples",),
    )
    results = res["results"]
    for task in TASKS:
        assert results[f"misi_{task}"]["score,none"] == 1.0, task
        assert results[f"misi_{task}"]["exact,none"] == 1.0, task
    assert results["misi"]["score,none"] == 1.0
    want = expected_averages(data_dir, LIMIT, lambda row: row["answer"])
    # 1.0 when the first rows of T4 hold both halves; else missing (NaN), as the scorer says (the
    # default paper build may start T4's test split with two negatives)
    assert want["paper_average"] == 1.0 or math.isnan(want["paper_average"])
    assert results["misi"]["average_headline_tasks,none"] == 1.0
    assert same_figure(results["misi"]["paper_average,none"], want["paper_average"])
    assert results["misi_translation"]["paper_average,none"] == pytest.approx(
        7 / 8
    )  # a task's share only
    _score_lmms_samples_file(tmp_path, data_dir)
    assert results["tiny_misi_rotation"]["score,none"] == 1.0
    assert res["n-samples"]["misi_translation"]["effective"] == LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("constant", ["move x 3", "None"])
def test_lmms_eval_constant_matches_scorer(env, data_dir, tmp_path, constant):
    import datasets

    res = _run_lmms(
        env,
        tmp_path,
        f"sys.argv[1:1] = ['--model', 'dummy', '--model_args', 'response={constant}']",
        "misi",
    )
    results = res["results"]
    per_task = {}
    for task in TASKS:
        rows = datasets.load_dataset(str(data_dir), task, split="test").select(range(LIMIT))
        scores = [score_doc(r, constant) for r in rows]
        expected = math.fsum(s["score"] for s in scores) / len(scores)
        per_task[task] = expected
        assert results[f"misi_{task}"]["score,none"] == pytest.approx(expected), task
    assert results["misi"]["score,none"] == pytest.approx(sum(per_task.values()) / len(per_task))
    headline = [v for t, v in per_task.items() if TASK_BY_NAME[t].in_headline]
    assert results["misi"]["average_headline_tasks,none"] == pytest.approx(
        sum(headline) / len(headline)
    )
    want = expected_averages(data_dir, LIMIT, lambda row: constant)
    assert same_figure(results["misi"]["paper_average,none"], want["paper_average"])
    assert same_figure(results["misi"]["score,none"], want["average_all_tasks"])
    # the intervals: the scorer's block for the same answers, and its standard errors in the
    # group's and tasks' stderr fields (set by the launcher before lmms-eval saved the file)
    block = expected_block(data_dir, LIMIT, lambda row: constant)
    assert res["misi_intervals"]["test"] == block
    stats = block["statistics"]
    assert results["misi"]["score_stderr,none"] == stats["average_all_tasks"]["se"]
    if "paper_average" in stats:
        assert results["misi"]["paper_average_stderr,none"] == stats["paper_average"]["se"]
    for task in TASKS:
        assert results[f"misi_{task}"]["score_stderr,none"] == stats[task]["se"], task


def _score_lmms_samples_file(out: Path, data_dir: Path) -> None:
    """lmms-eval's own --log_samples file is a predictions file the scorer reads: its doc_id
    positions resolve to question ids (checked against the gold targets)."""
    import datasets
    from misi_bench.builder.scoring import read_predictions, resolve_positions, score_records

    [path] = glob.glob(str(out / "**" / "*_samples_misi_pocket_ligand.jsonl"), recursive=True)
    file = read_predictions(path)
    assert file.shape == "lmms-eval-samples" and file.config == "pocket_ligand"
    rows = list(
        datasets.load_dataset(str(data_dir), "pocket_ligand", split="test").remove_columns(
            ["images"]
        )
    )
    file = resolve_positions(file, rows)
    assert sorted(file.predictions) == sorted(r["id"] for r in rows[:LIMIT])
    result = score_records(rows[:LIMIT], file.predictions)
    assert result["missing"] == [] and result["report"]["tasks"]["pocket_ligand"]["score"] == 1.0
    # the whole --output_path folder is a predictions source of its own: every config's
    # samples file of the split asked for (the tiny_misi_rotation run's file is passed over)
    from misi_bench.builder.scoring import read_prediction_source

    source = read_prediction_source(out, "test")
    assert source.kind == "lmms-eval-folder" and len(source.files) == len(TASKS)
    assert {f.config for f in source.files} == set(TASKS)
    assert "another split" in source.notes[0]

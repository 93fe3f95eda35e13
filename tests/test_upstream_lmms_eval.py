"""The upstream lmms-eval contribution (``eval_plugins/upstream/lmms_eval``): the generated task
folder patch is current, and each patch, applied with ``patch -p1`` to a copy of the installed
lmms-eval, makes the bare command ``lmms-eval --tasks misi_* --model ... --limit 2`` run the
nine tasks (no ``--include_path``, no ``misi-bench`` launcher).

Environment notes (not what is tested): the copy goes first on ``PYTHONPATH`` of a subprocess;
its folder also holds a ``sitecustomize.py`` applying our torchvision shim, because CI pairs a
CPU-only torch with PyPI's CUDA torchvision (see ``eval_plugins/_torch_compat.py``). The data is
a real small build placed at ``./misi-bench/misi-bench`` of the working directory, the local-clone
layout of the Hub repo id that the task YAML names, so ``datasets`` loads it offline.
"""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from misi_bench.eval_plugins import harness_files
from misi_bench.eval_plugins.common import TASKS, score_doc

from harness_support import patched_copy

LIMIT = 2
TASK_FOLDER = harness_files.LMMS_FOLDER
PLUGIN_PATCH = (
    harness_files.HERE / "upstream" / "lmms_eval" / "0002-plugin-tasks-before-task-index.patch"
)


def task_files() -> list[Path]:
    """The lmms-eval task folder's files, sorted (compiled files and caches left out)."""
    return sorted(
        p
        for p in TASK_FOLDER.iterdir()
        if p.is_file() and p.suffix != ".pyc" and not p.name.startswith(".")
    )


def test_committed_task_patch_is_current():
    assert harness_files.main(["--check"]) == 0, (
        "run python -m misi_bench.eval_plugins.harness_files"
    )
    patch = harness_files.TASK_PATCH.read_text()
    names = {p.name for p in task_files()}
    assert {"utils.py", "README.md", "misi.yaml", "_default_template_yaml"} <= names
    for name in names:
        assert f"+++ b/lmms_eval/tasks/misi/{name}\n" in patch


def test_task_readme_names_every_metric():
    folder = TASK_FOLDER
    readme = (folder / "README.md").read_text()
    template = yaml.safe_load(
        "\n".join(
            line
            for line in (folder / "_default_template_yaml").read_text().splitlines()
            if "!function" not in line
        )
    )
    group = yaml.safe_load((folder / "misi.yaml").read_text())
    names = {m["metric"] for m in template["metric_list"]} | {
        m["metric"] for m in group["aggregate_metric_list"]
    }
    for name in sorted(names):
        assert f"`{name}`" in readme, (
            f"metric {name} of the task YAML is not described in {folder / 'README.md'}: "
            "add it, then run python -m misi_bench.eval_plugins.harness_files"
        )
    for task in TASKS:
        assert f"misi_{task}" in readme, task


def _bare_lmms_eval(
    tmp: Path, site: Path, data_dir: Path, args: list[str], extra_env: dict | None = None
) -> dict:
    work = tmp / "work"
    (work / "misi-bench").mkdir(parents=True)
    (work / "misi-bench" / "misi-bench").symlink_to(data_dir, target_is_directory=True)
    root = Path(__file__).resolve().parents[1]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MISI_BENCH_", "LMMS_EVAL_PLUGINS"))
    }
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(site), str(root)]),
            "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
            "HF_HOME": str(tmp / "hf"),
            "TOKENIZERS_PARALLELISM": "false",
            **(extra_env or {}),
        }
    )
    out = tmp / "out"
    exe = Path(sys.executable).with_name("lmms-eval")
    proc = subprocess.run(
        [
            str(exe),
            "--tasks",
            "misi_*",
            "--limit",
            str(LIMIT),
            "--output_path",
            str(out),
            "--verbosity",
            "WARNING",
            *args,
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    files = glob.glob(str(out / "**" / "*results.json"), recursive=True)
    # lmms-eval exits 0 even when nothing ran, so the results file is the check
    assert proc.returncode == 0 and files, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads(Path(files[0]).read_text())
    assert set(res["results"]) == {f"misi_{t}" for t in TASKS}
    for task in TASKS:
        assert res["n-samples"][f"misi_{task}"]["effective"] == LIMIT, task
    return res["results"]


@pytest.mark.slow
def test_task_folder_patch_runs_bare_lmms_eval(tmp_path, data_dir):
    import datasets

    site = patched_copy(tmp_path, "lmms_eval", [harness_files.TASK_PATCH])
    assert (site / "lmms_eval" / "tasks" / "misi" / "misi.yaml").is_file()
    constant = "A"
    results = _bare_lmms_eval(
        tmp_path, site, data_dir, ["--model", "dummy", "--model_args", f"response={constant}"]
    )
    for task in TASKS:
        rows = datasets.load_dataset(str(data_dir), task, split="test").select(range(LIMIT))
        expected = math.fsum(score_doc(r, constant)["score"] for r in rows) / LIMIT
        assert results[f"misi_{task}"]["score,none"] == pytest.approx(expected), task


@pytest.mark.slow
def test_plugin_patch_lets_an_installed_package_register_tasks(tmp_path, data_dir):
    site = patched_copy(tmp_path, "lmms_eval", [PLUGIN_PATCH])
    assert not (site / "lmms_eval" / "tasks" / "misi").exists()  # the tasks come from our package
    results = _bare_lmms_eval(
        tmp_path,
        site,
        data_dir,
        ["--model", "misi_oracle"],
        {"LMMS_EVAL_PLUGINS": "misi_bench.eval_plugins.lmms_eval"},
    )
    for task in TASKS:
        assert results[f"misi_{task}"]["score,none"] == 1.0, task

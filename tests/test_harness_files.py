"""The harness task files are generated from the task registry (issue 21 step 2): the committed
lmms-eval / lm-eval YAMLs and the upstream lmms-eval patch equal what the generator writes, and
the generator follows the registry (a new entry gets its files, a stale file is caught)."""

from __future__ import annotations

import dataclasses
import shutil

import yaml
from misi_bench.builder.core.registry import TASK_BY_NAME, TASK_NAMES, TASK_SPECS
from misi_bench.eval_plugins import harness_files
from misi_bench.eval_plugins.common import metric_names


def _load(text: str) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor(
        "!function", lambda loader, node: f"!function {loader.construct_scalar(node)}"
    )
    return yaml.load(text, Loader=Loader)  # noqa: S506 (a SafeLoader subclass)


def test_committed_harness_files_are_the_generated_ones():
    assert harness_files.main(["--check"]) == 0, (
        "run python -m misi_bench.eval_plugins.harness_files"
    )


def test_generated_yaml_follows_the_registry():
    files = harness_files.generated_yaml()
    for folder in (harness_files.LMMS_FOLDER, harness_files.LM_FOLDER):
        for group, split, prefix in harness_files.GROUPS:
            doc = _load(files[folder / f"{group}.yaml"])
            assert doc["task"] == [prefix + t for t in TASK_NAMES]
            for spec in TASK_SPECS:
                task = _load(files[folder / f"{prefix}{spec.name}.yaml"])
                assert task["task"] == prefix + spec.name
                assert spec.name in (
                    task.get("dataset_name"),
                    (task.get("dataset_kwargs") or {}).get("config"),
                )
                assert task.get("test_split", "test") == split
                metrics = [
                    m["metric"] for m in task.get("metric_list", [])
                ] or harness_files.TEMPLATE_METRICS
                assert metrics == metric_names(spec.name)
    residue = _load(files[harness_files.LMMS_FOLDER / "misi_residue_ligand.yaml"])
    assert [m["metric"] for m in residue["metric_list"]][-2:] == [
        "score_positive",
        "score_negative",
    ]


def test_a_new_registry_entry_gets_its_files_and_patch(monkeypatch):
    extra = dataclasses.replace(TASK_BY_NAME["zooming"], name="tenth_task", number=10, aliases=())
    monkeypatch.setattr(harness_files, "TASK_SPECS", (*TASK_SPECS, extra))
    files = harness_files.generated_files()
    for folder in (harness_files.LMMS_FOLDER, harness_files.LM_FOLDER):
        assert "  - misi_tenth_task\n" in files[folder / "misi.yaml"]
        assert _load(files[folder / "tiny_misi_tenth_task.yaml"])["task"] == "tiny_misi_tenth_task"
    assert "+++ b/lmms_eval/tasks/misi/misi_tenth_task.yaml\n" in files[harness_files.TASK_PATCH]
    stale = harness_files.stale_files()
    assert (
        harness_files.LMMS_FOLDER / "misi_tenth_task.yaml" in stale
        and harness_files.TASK_PATCH in stale
    )


def test_check_catches_an_edited_a_missing_and_a_leftover_file(tmp_path, monkeypatch):
    lmms, lm = tmp_path / "lmms" / "misi", tmp_path / "lm" / "misi"
    shutil.copytree(harness_files.LMMS_FOLDER, lmms)
    shutil.copytree(harness_files.LM_FOLDER, lm)
    patch = tmp_path / "0001.patch"
    shutil.copy(harness_files.TASK_PATCH, patch)
    monkeypatch.setattr(harness_files, "LMMS_FOLDER", lmms)
    monkeypatch.setattr(harness_files, "LM_FOLDER", lm)
    monkeypatch.setattr(harness_files, "TASK_PATCH", patch)
    assert harness_files.main(["--check"]) == 0
    (lmms / "misi_docking.yaml").write_text("task: misi_docking\n")
    (lm / "tiny_misi_rotation.yaml").unlink()
    (lm / "misi_retired_task.yaml").write_text("task: misi_retired_task\n")
    assert set(harness_files.stale_files()) == {
        lmms / "misi_docking.yaml",
        lm / "tiny_misi_rotation.yaml",
        lm / "misi_retired_task.yaml",
    }
    # the patch carries the hand-written files of the lmms-eval folder too
    (lmms / "README.md").write_text((lmms / "README.md").read_text() + "\nOne more line.\n")
    assert patch in harness_files.stale_files()
    assert harness_files.main(["--check"]) == 1
    harness_files.main([])
    assert harness_files.main(["--check"]) == 0
    assert (
        not (lm / "misi_retired_task.yaml").exists() and (lm / "tiny_misi_rotation.yaml").exists()
    )
    assert "+One more line.\n" in patch.read_text()

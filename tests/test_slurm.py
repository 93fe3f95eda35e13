"""Cluster builds under a real single-node Slurm (slurm-wlm + munge, started here as root): the
generated script's job array and merge give the same bytes as a one-machine build, and a killed
array task re-submitted alone resumes and completes the build."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from slurm_support import SlurmCluster, missing_programs

pytestmark = pytest.mark.slow

SEED = 3
LIMIT = 6
SHARDS = 3
TASKS = ("rotation", "docking", "pocket_ligand")
BUILD_ARGS = ("--seed", str(SEED), "--limit", str(LIMIT), "--configs", *TASKS)
JOB_TIMEOUT = 600  # seconds; one case takes well under a minute on 2 cores


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    missing = missing_programs()
    assert not missing, f"{missing} not installed: apt-get install -y slurm-wlm munge (see .ci/run)"
    assert os.geteuid() == 0, (
        "the Slurm test starts munged, slurmctld and slurmd itself and needs root"
    )
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The one-machine build with the same options."""
    from misi_bench.builder.dataset.build import build_dataset

    out = tmp_path_factory.mktemp("one_machine") / "out"
    build_dataset(
        source="samples", out=out, seed=SEED, limit=LIMIT, tasks=TASKS, workers=1, progress=False
    )
    return out


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of a build folder except the hidden work and log folders."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    }


def _script(tmp_path: Path, out: Path) -> Path:
    from misi_bench.builder.dataset.slurm import SlurmJob, write_slurm_script

    job = SlurmJob(
        source="samples", out=str(out), shards=SHARDS, cpus=1, time="20", build_args=BUILD_ARGS
    )
    return write_slurm_script(job, tmp_path / "build.sbatch")


def _submit(
    slurm: SlurmCluster, script: Path, *args: str, env: dict | None = None
) -> tuple[str, str]:
    text = slurm.run(["bash", str(script), *args], cwd=script.parent, env=env).stdout
    found = re.search(r"array_job=(\d+) merge_job=(\d+)", text)
    assert found, text
    return found.group(1), found.group(2)


def test_array_build_equals_one_machine_build(slurm, reference, tmp_path):
    out = tmp_path / "cluster"
    array_job, merge_job = _submit(slurm, _script(tmp_path, out))
    states = slurm.wait_jobs([array_job, merge_job], JOB_TIMEOUT)
    assert set(states.values()) == {"COMPLETED"}, (states, slurm.logs())
    assert sorted(k for k in states if "_" in k) == [f"{array_job}_{i}" for i in range(SHARDS)]
    # each array task built its own shard (picked from SLURM_ARRAY_TASK_ID) and did not merge
    for i in range(SHARDS):
        log = (out / ".slurm" / f"misi-build-{array_job}_{i}.out").read_text()
        assert f"Slurm array task {i} of job {array_job}: building shard {i} of {SHARDS}" in log, (
            log
        )
        assert f"shard {i} of {SHARDS} generated" in log and "built " not in log, log
    expected = _files(reference)
    assert "manifest.json" in expected and any(k.endswith(".parquet") for k in expected)
    assert _files(out) == expected


def test_killed_array_task_resubmitted_completes_the_build(slurm, reference, tmp_path):
    out = tmp_path / "cluster"
    script = _script(tmp_path, out)
    array_job, merge_job = _submit(slurm, script, env={"SBATCH_HOLD": "1"})  # all held
    slurm.run(
        ["scontrol", "release", f"{array_job}_1"]
    )  # task 1 starts alone; kill it while it runs
    slurm.wait_state(f"{array_job}_1", "RUNNING", JOB_TIMEOUT)
    slurm.run(["scancel", f"{array_job}_1"])
    for task in (0, 2):
        slurm.run(["scontrol", "release", f"{array_job}_{task}"])
    slurm.run(
        ["scontrol", "release", merge_job], check=False
    )  # may already be cancelled (invalid dependency)
    states = slurm.wait_jobs([array_job, merge_job], JOB_TIMEOUT)
    assert states[f"{array_job}_0"] == states[f"{array_job}_2"] == "COMPLETED", states
    assert states[f"{array_job}_1"] == "CANCELLED", states
    assert states[merge_job] != "COMPLETED", (
        states
    )  # afterok never satisfied: the merge did not run
    assert not (out / "manifest.json").exists()
    # the merge refuses an incomplete set of shards and names the missing one
    refused = slurm.run(["bash", str(script), "--merge"], check=False)
    assert refused.returncode == 2, refused
    assert "missing shard(s) 1 of 3" in refused.stderr, refused.stderr
    done = {p.name: p.stat().st_mtime_ns for p in out.glob(".work/*/complexes/*.status.json")}
    assert 4 <= len(done) < LIMIT  # shards 0 and 2 (two complexes each), perhaps part of shard 1
    # re-submit shard 1 alone (and the merge after it)
    array_job, merge_job = _submit(slurm, script, "1")
    states = slurm.wait_jobs([array_job, merge_job], JOB_TIMEOUT)
    assert set(states.values()) == {"COMPLETED"}, (states, slurm.logs())
    assert sorted(states) == sorted([f"{array_job}_1", merge_job])
    after = {p.name: p.stat().st_mtime_ns for p in out.glob(".work/*/complexes/*.status.json")}
    assert len(after) == LIMIT and all(
        after[k] == v for k, v in done.items()
    )  # finished shards not redone
    assert _files(out) == _files(reference)

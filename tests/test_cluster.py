"""Shard choice from a Slurm array task's environment, the merge's refusal, and the generated
sbatch script (its text and its command line). The script under a real Slurm: test_slurm.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from misi_bench.builder.cli.main import main
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset.slurm import SlurmJob, slurm_script
from misi_bench.builder.store.cluster import (
    choose_shard,
    default_workers,
    missing_units_message,
    shard_members,
)

ARRAY = {
    "SLURM_ARRAY_JOB_ID": "77",
    "SLURM_ARRAY_TASK_COUNT": "3",
    "SLURM_ARRAY_TASK_MIN": "0",
    "SLURM_ARRAY_TASK_MAX": "2",
}


def test_shard_from_array_task():
    assert choose_shard(env={}) == choose_shard(env={"SLURM_CPUS_PER_TASK": "4"})
    assert (
        choose_shard(env={}).count,
        choose_shard(env={}).index,
        choose_shard(env={}).origin,
    ) == (1, 0, "default")
    got = choose_shard(env={**ARRAY, "SLURM_ARRAY_TASK_ID": "2"})
    assert (got.count, got.index, got.from_slurm) == (3, 2, True)
    # an array 1-3 still means shards 0..2
    shifted = {
        **ARRAY,
        "SLURM_ARRAY_TASK_MIN": "1",
        "SLURM_ARRAY_TASK_MAX": "3",
        "SLURM_ARRAY_TASK_ID": "1",
    }
    assert (choose_shard(env=shifted).count, choose_shard(env=shifted).index) == (3, 0)
    # --num-shards given: the task id is the shard (a failed task re-submitted alone keeps its shard)
    alone = {
        "SLURM_ARRAY_TASK_ID": "4",
        "SLURM_ARRAY_TASK_COUNT": "1",
        "SLURM_ARRAY_TASK_MIN": "4",
        "SLURM_ARRAY_TASK_MAX": "4",
    }
    assert (choose_shard(8, env=alone).count, choose_shard(8, env=alone).index) == (8, 4)
    # flags win over the environment
    flags = choose_shard(5, 3, env={**ARRAY, "SLURM_ARRAY_TASK_ID": "1"})
    assert (flags.count, flags.index, flags.origin) == (5, 3, "flags")


@pytest.mark.parametrize(
    "num_shards, env, words",
    [
        (2, {**ARRAY, "SLURM_ARRAY_TASK_ID": "2"}, "from SLURM_ARRAY_TASK_ID"),
        (
            None,
            {**ARRAY, "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_ID": "2"},
            "not a contiguous range",
        ),
        (None, {**ARRAY, "SLURM_ARRAY_TASK_ID": "x"}, "SLURM_ARRAY_TASK_ID='x'"),
    ],
)
def test_bad_array_environment_is_a_clear_error(num_shards, env, words):
    with pytest.raises(MisiError, match=words.replace("(", r"\(")):
        choose_shard(num_shards, env=env)


def test_workers_default_to_slurm_cpus():
    assert default_workers(None, {"SLURM_CPUS_PER_TASK": "6"}) == 6
    assert default_workers(2, {"SLURM_CPUS_PER_TASK": "6"}) == 2
    assert default_workers(None, {}) == 1


def test_missing_message_names_shards_and_complexes():
    ids = ["1a", "1b", "1c", "1d", "1e"]
    assert shard_members(ids, 2) == {0: ["1a", "1c", "1e"], 1: ["1b", "1d"]}
    text = missing_units_message(ids, ["1b", "1e"], 2)
    assert "2 of 5 complexes" in text and "missing shard(s) 0,1 of 2" in text
    assert "shard 0: 1e" in text and "shard 1: 1b" in text and "bash SCRIPT 0,1)" in text
    assert "1b, 1e" in missing_units_message(ids, ["1e", "1b"], 1)


def test_array_task_builds_its_shard_then_merge_names_missing_shard(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    common = [
        "--source",
        "samples",
        "--out",
        str(out),
        "--limit",
        "3",
        "--configs",
        "rotation",
        "--quiet",
    ]
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "0")
    for key, value in ARRAY.items():
        monkeypatch.setenv(key, value)
    assert main(["build", *common]) == 0  # no flags: shard 0 of 3, no merge
    assert "shard 0 of 3 generated" in capsys.readouterr().out
    assert [p.name for p in out.glob(".work/*/complexes/*.status.json")] == ["1a28.status.json"]
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID")
    assert main(["build", *common, "--merge-only", "--num-shards", "3"]) == 2
    err = capsys.readouterr().err
    assert "2 of 3 complexes are not generated yet; missing shard(s) 1,2 of 3" in err, err
    assert not (out / "manifest.json").exists()


def test_zero_or_negative_workers_is_an_error():
    from misi_bench.builder.core.errors import MisiError

    for bad in (0, -1):
        with pytest.raises(MisiError, match="--workers must be a positive number"):
            default_workers(bad, {})


def test_script_text(tmp_path):
    job = SlurmJob(
        source=str(tmp_path / "pdbbind"),
        out=str(tmp_path / "out"),
        shards=12,
        cpus=8,
        time="1-00:00:00",
        merge_time="3:00:00",
        partition="cpu",
        mem="16G",
        build_args=("--seed", "1"),
        push_repo="org/misi",
        push_tag="v1.2.0",
    )
    text = slurm_script(job, command=["/opt/env/bin/misi-bench"])
    for line in (
        "#SBATCH --array=0-11",
        "#SBATCH --cpus-per-task=8",
        "#SBATCH --time=1-00:00:00",
        "#SBATCH --partition=cpu",
        "#SBATCH --mem=16G",
        "MISI=(/opt/env/bin/misi-bench)",
        f"SOURCE={tmp_path / 'pdbbind'}",
        "SHARDS=12",
        "BUILD_ARGS=(--seed 1)",
        "--dependency=afterok:",
        "--kill-on-invalid-dep=yes",
        "--time=3:00:00 ",
        "--cpus-per-task=8 --time=3:00:00",  # the merge job validates and audits on the array's CPUs
        'push "$OUT" --repo org/misi --tag v1.2.0',
    ):
        assert line in text, line
    assert "@" not in text.replace("[@]", "")
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0  # valid bash


@pytest.mark.parametrize(
    "change, words",
    [
        ({"time": "soon"}, "not a Slurm time limit"),
        ({"merge_time": "1h"}, "--merge-time"),
        ({"shards": 0}, "--array must be"),
        ({"push_repo": "org/x"}, "go together"),
        ({"push_repo": "org/x", "push_tag": "1.0"}, "vMAJOR"),
        ({"build_args": ("--workers", "3")}, "set by the script"),
        ({"partition": "a b"}, "--partition"),
        ({"out": "/tmp/my out"}, "spaces"),
    ],
)
def test_bad_script_options(change, words):
    with pytest.raises(MisiError, match=words):
        SlurmJob(**{"source": "samples", "out": "/tmp/o", **change})


def test_slurm_script_command(tmp_path):
    cmd = [
        sys.executable,
        "-c",
        "import sys, misi_bench; sys.exit(misi_bench.main())",
        "slurm-script",
        "--source",
        "samples",
        "--out",
        str(tmp_path / "out"),
        "--array",
        "3",
        "--cpus",
        "2",
        "--time",
        "30",
    ]
    printed = subprocess.run(
        [*cmd, "--", "--seed", "3", "--configs", "rotation"], capture_output=True, text=True
    )
    assert printed.returncode == 0, printed.stderr
    assert (
        "#SBATCH --array=0-2" in printed.stdout
        and "BUILD_ARGS=(--seed 3 --configs rotation)" in printed.stdout
    )
    misi = printed.stdout.split("MISI=(")[1].split(")")[0]
    assert misi.startswith(str(Path(sys.executable).absolute().parent)), (
        misi
    )  # this installation's misi-bench
    bad = subprocess.run([*cmd, "--", "--sed", "3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--sed" in bad.stderr
    written = subprocess.run(
        [*cmd, "--write", str(tmp_path / "job.sh")], capture_output=True, text=True
    )
    assert written.returncode == 0 and (tmp_path / "out" / ".slurm").is_dir()
    assert (tmp_path / "job.sh").read_text() == printed.stdout.replace(
        "BUILD_ARGS=(--seed 3 --configs rotation)", "BUILD_ARGS=()"
    )
    assert f"bash {tmp_path / 'job.sh'}" in written.stderr

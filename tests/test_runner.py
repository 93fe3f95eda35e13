"""The one job runner of build, merge, validate and audit (``builder/store/runner.py``): results
in job order whatever the worker count, errors named by stage and job, progress counted, a dead
worker reported, workers that die with their parent."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest
from misi_bench.builder.store import progress
from misi_bench.builder.store.runner import JobRunner, Setup, WorkerDied


class _Scaled:
    """A worker state: multiplies by ``factor``; counts its jobs; ``close()`` marks it closed."""

    closed: list = []

    def __init__(self, factor: int):
        self.factor, self.jobs = factor, 0

    def close(self) -> None:
        _Scaled.closed.append(self.factor)


def _scale(state: _Scaled, job: int) -> tuple[int, int]:
    state.jobs += 1
    time.sleep(0.01 * (job % 3))  # jobs finish out of order in a pool
    return job * state.factor, job


def _plain(job: int) -> int:
    if job == 4:
        raise ValueError(f"bad value {job}")
    return -job


def _die_on_three(job: int) -> int:
    time.sleep(0.05)
    if job == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return job


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.parametrize("lazy", [False, True])
def test_one_and_several_workers_give_the_same_results_in_job_order(lazy):
    jobs = list(range(12))
    runs = {}
    for workers in (1, 3):
        with JobRunner(workers, Setup(_Scaled, (7,)), window=2) as runner:
            runs[workers] = runner.run(_scale, iter(jobs) if lazy else jobs, "scale")
    assert runs[1] == runs[3] == [(7 * j, j) for j in jobs]


def test_in_process_state_is_made_once_and_closed_on_leaving():
    _Scaled.closed.clear()
    with JobRunner(1, Setup(_Scaled, (2,))) as runner:
        assert runner.run(_scale, [1, 2], "a") == [(2, 1), (4, 2)]
        assert runner.run(_scale, [3], "b") == [(6, 3)]
        assert runner._state.jobs == 3 and not _Scaled.closed
    assert _Scaled.closed == [2]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_job_is_named_and_keeps_its_type(workers, caplog):
    with JobRunner(workers) as runner, pytest.raises(ValueError, match="bad value 4") as info:
        runner.run(_plain, range(8), "negate", label=lambda j: f"item {j}")
    assert "in job item 4 of negate" in info.value.__notes__
    assert "negate: job item 4 failed: ValueError: bad value 4" in caplog.text
    assert not multiprocessing.active_children()  # the one shutdown path ended the workers


class _Bar:
    """Stands in for tqdm: records what a stage's bar was told."""

    drawn: list = []

    def __init__(self, desc, total, unit, leave):
        self.desc, self.total, self.n, self.closed = desc, total, 0, False
        _Bar.drawn.append(self)

    def update(self, n=1):
        self.n += n

    def close(self):
        self.closed = True


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_counts_jobs_or_result_sizes(workers, monkeypatch):
    monkeypatch.setattr(progress, "tqdm", _Bar)
    _Bar.drawn.clear()
    with progress.shown(True), JobRunner(workers) as runner:
        assert runner.run(_plain, [1, 2, 3], "counted jobs") == [-1, -2, -3]
        sizes = runner.run(len, [[1, 2], [3], [4, 5, 6]], "counted rows", total=6, size=int)
    assert sizes == [2, 1, 3]
    assert runner.counted == {"counted jobs": 3, "counted rows": 6}
    assert [(b.desc, b.total, b.n, b.closed) for b in _Bar.drawn] == [
        ("counted jobs", 3, 3, True),
        ("counted rows", 6, 6, True),
    ]
    with JobRunner(workers) as quiet:  # bars off: counted, nothing drawn
        quiet.run(_plain, [1, 2], "silent")
    assert quiet.counted == {"silent": 2} and len(_Bar.drawn) == 2


def test_a_killed_worker_is_reported_naming_its_job():
    with JobRunner(2) as runner, pytest.raises(WorkerDied) as info:
        runner.run(_die_on_three, range(10), "fragile", label=lambda j: f"job-{j}")
    text = str(info.value)
    assert text.startswith("fragile: a worker process ended abruptly") and "job-3" in text
    assert "job-0" not in text  # finished before the death: not a suspect
    assert not multiprocessing.active_children()


def test_workers_die_with_their_parent():
    script = (
        "import os, time\n"
        "from misi_bench.builder.store.runner import JobRunner\n"
        "def _pid(job):\n"
        "    time.sleep(0.3)\n"
        "    return os.getpid()\n"
        "with JobRunner(2) as runner:\n"
        "    print(*sorted(set(runner.run(_pid, range(4)))), flush=True)\n"
        "    runner.run(time.sleep, [60, 60])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(w) for w in workers)
    proc.kill()  # SIGKILL of the runner's process only
    proc.wait()
    start = time.time()
    while time.time() - start < 5 and any(_alive(w) for w in workers):
        time.sleep(0.05)
    alive = [w for w in workers if _alive(w)]
    for w in alive:
        os.kill(w, signal.SIGKILL)
    assert not alive, "the runner's workers outlived their parent by 5 s"

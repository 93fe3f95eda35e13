"""Nothing silently wrong, nothing lost (issue 30): the unit cache keyed by content, the atomic
publish switch (a full disk, an interrupted switch, fewer tasks), the folder's writer lock, and
pool workers that die with their parent. All on real embedded complexes."""

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.checks.validate import validate_dataset
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset import publish
from misi_bench.builder.dataset.build import build_dataset
from misi_bench.builder.dataset.lock import LOCK_NAME, folder_lock
from misi_bench.builder.store.manifest import read_manifest, shard_problems
from misi_bench.builder.store.sources import discover, file_checksums

FAST = {"progress": False, "audit": False}


def _root(sample_refs, tmp_path: Path, n: int = 4) -> Path:
    """A PDBbind-style root holding copies of the first ``n`` embedded complexes."""
    root = tmp_path / "pdbbind"
    for ref in sample_refs[:n]:
        shutil.copytree(ref.path, root / ref.pdb_id)
    return root


def _statuses(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in out.glob(".work/*/complexes/*.status.json")}


def _release(out: Path) -> dict[str, bytes]:
    """Every file of the published release (not the work area, staging or lock)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and not p.relative_to(out).as_posix().startswith((".work", ".publish"))
        and p.name != LOCK_NAME
    }


def _digests(manifest: dict) -> dict[str, str]:
    return {k: v["sha256"] for k, v in manifest["shards"].items()}


@pytest.mark.slow  # four builds (28 s on a loaded machine); fast siblings: the tests below
def test_changed_input_file_is_rebuilt_and_logged(sample_refs, tmp_path, caplog):
    root = _root(sample_refs, tmp_path)
    out = tmp_path / "out"
    kw = {"source": root, "tasks": ["rotation", "translation_rotation"], **FAST}
    first = build_dataset(out=out, **kw)
    before = _statuses(out)
    ids = sorted(p.name for p in root.iterdir())
    a, b = ids[0], ids[1]
    for path in (root / b).iterdir():  # a's files now hold b's structure (same names as before)
        shutil.copyfile(path, root / a / path.name.replace(b, a))
    # a merge of units made elsewhere (cluster shards) refuses the stale ones
    with pytest.raises(MisiError, match=f"built from other inputs .*{a}: input file"):
        build_dataset(out=out, merge_only=True, **kw)
    assert read_manifest(out) == json.loads(json.dumps(first))
    caplog.set_level(logging.INFO, logger="misi_bench.builder.dataset")
    second = build_dataset(out=out, **kw)
    assert f"rebuilding {a}: input file(s) changed" in caplog.text
    after = _statuses(out)
    redone = {name.split(".")[0] for name, mtime in before.items() if after[name] != mtime}
    assert a in redone
    for other in redone - {a}:  # only a's T5 partners are redone besides a
        status = json.loads(next(out.glob(f".work/*/complexes/{other}.status.json")).read_text())
        assert a in status["read"] and f"rebuilding {other}: the files of {a}" in caplog.text
    ref = next(r for r in discover(str(root)) if r.pdb_id == a)
    assert second["inputs"][a]["files"] == file_checksums(ref)
    fresh = build_dataset(out=tmp_path / "fresh", **kw)
    assert _digests(second) == _digests(fresh) != _digests(first)
    assert validate_dataset(out).ok
    # an unchanged rerun reuses every unit
    third = build_dataset(out=out, **kw)
    assert _statuses(out) == after and _digests(third) == _digests(second)


def test_fewer_tasks_remove_the_old_configs_in_the_switch(sample_refs, tmp_path):
    root = _root(sample_refs, tmp_path)
    out = tmp_path / "out"
    build_dataset(source=root, out=out, tasks=["rotation", "pocket_ligand"], **FAST)
    assert (out / "pocket_ligand").is_dir()
    stale = (out / "pocket_ligand" / "test-00000-of-00001.parquet").read_bytes()
    manifest = build_dataset(source=root, out=out, tasks=["rotation"], **FAST)
    assert not (out / "pocket_ligand").exists()
    assert list(manifest["counts"]) == ["rotation"] and read_manifest(out) == json.loads(
        json.dumps(manifest)
    )
    assert shard_problems(out, manifest) == []
    assert not (out / ".publish").exists() or not any((out / ".publish").iterdir())
    assert validate_dataset(out).ok
    # validate compares every shard with the manifest: a stale config's shard put back, and a
    # shard rewritten with the same rows in another order (valid Parquet, other bytes)
    (out / "pocket_ligand").mkdir()
    (out / "pocket_ligand" / "test-00000-of-00001.parquet").write_bytes(stale)
    shard = out / "rotation" / "train-00000-of-00001.parquet"
    table = pq.read_table(shard)
    pq.write_table(table.take(list(range(table.num_rows))[::-1]), shard)
    problems = validate_dataset(out).problems
    assert "pocket_ligand/test-00000-of-00001.parquet: not listed in manifest.json" in problems
    assert any(
        p.startswith("rotation/train-00000-of-00001.parquet: sha256 differs") for p in problems
    )


@pytest.fixture
def small_disk(tmp_path):
    """A 48 MiB tmpfs (a real file system that fills up), or a skip where mounting is refused."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_full_disk_during_the_merge_leaves_the_previous_build_as_it_was(
    sample_refs, tmp_path, small_disk
):
    root = _root(sample_refs, tmp_path)
    out = small_disk / "out"
    old = build_dataset(source=root, out=out, tasks=["rotation"], **FAST)
    release = _release(out)
    tasks = ["rotation", "pocket_ligand", "zooming"]
    assert build_dataset(source=root, out=out, tasks=tasks, merge=False, **FAST) == {}
    stat = os.statvfs(small_disk)
    filler = small_disk / "filler"
    with open(filler, "wb") as fh:  # leave 64 KiB: the new shards cannot be written
        fh.write(b"\0" * (stat.f_bavail * stat.f_frsize - 64 * 1024))
    with pytest.raises(MisiError, match="merge failed.*unchanged"):
        build_dataset(source=root, out=out, tasks=tasks, merge_only=True, **FAST)
    assert _release(out) == release
    assert read_manifest(out) == json.loads(json.dumps(old)) and shard_problems(out, old) == []
    assert not [p for p in (out / publish.PUBLISH_DIR).iterdir()]  # staged files freed
    filler.unlink()
    new = build_dataset(source=root, out=out, tasks=tasks, merge_only=True, **FAST)
    assert sorted(new["counts"]) == sorted(tasks) and shard_problems(out, new) == []


# among the old moves (fast lane); among the new (slow lane: the same code path, a second build)
@pytest.mark.parametrize("killed_after", [3, pytest.param(9, marks=pytest.mark.slow)])
def test_a_switch_killed_midway_is_finished_by_the_next_writer(
    sample_refs, tmp_path, monkeypatch, killed_after
):
    root = _root(sample_refs, tmp_path)
    out = tmp_path / "out"
    build_dataset(source=root, out=out, tasks=["rotation", "pocket_ligand"], **FAST)
    real = os.replace
    calls = []

    def dying_replace(src, dst):  # the process "dies" after this many renames of the switch
        if len(calls) == killed_after:
            raise KeyboardInterrupt
        calls.append(dst)
        real(src, dst)

    monkeypatch.setattr(publish, "os", SimpleNamespace(replace=dying_replace))
    with pytest.raises(KeyboardInterrupt):
        build_dataset(source=root, out=out, tasks=["rotation"], **FAST)
    monkeypatch.setattr(publish, "os", os)
    assert len(calls) == killed_after  # journal written, then that many renames
    assert (out / publish.PUBLISH_DIR / publish.JOURNAL).exists()
    # the next writer (here a rebuild of the same config) finishes the switch first
    manifest = build_dataset(source=root, out=out, tasks=["rotation"], **FAST)
    assert not (out / publish.PUBLISH_DIR / publish.JOURNAL).exists()
    assert not (out / "pocket_ligand").exists() and list(manifest["counts"]) == ["rotation"]
    assert shard_problems(out, manifest) == [] and validate_dataset(out).ok


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from misi_bench.builder.dataset.lock import folder_lock\n"
            "with folder_lock(sys.argv[1], 'holder-test build'):\n"
            "    print('locked', flush=True); time.sleep(120)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(MisiError) as err:
            build_dataset(source="samples", out=out, tasks=["rotation"], **FAST)
        line = str(err.value)
        assert "\n" not in line and f"pid {holder.pid}" in line and "holder-test build" in line
        assert not (out / ".work").exists()  # refused before any work
        from misi_bench.builder.dataset.hub import push_dataset

        with pytest.raises(MisiError, match=f"pid {holder.pid}"):
            push_dataset(out, "org/name", tag="v1.0.0")
    finally:
        holder.kill()
        holder.wait()
    # the holder died (kill -9): its lock is stale and the next writer takes it over
    with folder_lock(out, "next writer"):
        record = json.loads((out / LOCK_NAME).read_text())
        assert record["pid"] == os.getpid() and record["command"] == "next writer"


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text() if (task / "children").exists() else ""
        found |= {int(x) for x in text.split()}
    return found


def _running(pid: int) -> bool:
    """Whether any thread of process ``pid`` is alive: a killed process's main thread can be a
    zombie while its other threads (the parent watch) still exit and hold its open files, the
    folder lock among them."""
    states = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
        except (OSError, IndexError):
            continue
    return any(state not in ("Z", "X") for state in states)


def _lock_free(out: Path) -> bool:
    """Whether nobody holds the build folder's lock (``flock`` on ``out / LOCK_NAME``)."""
    import fcntl

    fd = os.open(out / LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken here
    return True


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_kill_9_of_a_build_takes_its_workers_down_and_resume_is_identical(tmp_path):
    out, limit, tasks = tmp_path / "killed", 10, ["rotation", "translation"]
    cmd = [
        sys.executable,
        "-c",
        "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))",
        "build", "--source", "samples", "--limit", str(limit), "--configs", *tasks,
        "--workers", "2", "--out", str(out), "--quiet",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        workers |= _children(proc.pid)
        if len(_statuses(out)) >= 2 and len(workers) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "build finished before it could be killed; raise the limit"
    workers |= _children(proc.pid)
    proc.kill()  # SIGKILL to the main process only, not its group
    proc.wait()
    killed_at = time.time()
    while time.time() - killed_at < 5 and any(_running(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _running(w)], "pool workers outlived their parent"
    while time.time() - killed_at < 5 and not _lock_free(out):
        time.sleep(0.1)
    assert _lock_free(out), "a process of the killed build still holds its folder 5 s on"
    finished = _statuses(out)
    assert 2 <= len(finished) < limit
    resumed = build_dataset(source="samples", out=out, limit=limit, tasks=tasks, workers=2, **FAST)
    assert all(_statuses(out)[name] == mtime for name, mtime in finished.items())
    whole = build_dataset(
        source="samples", out=tmp_path / "whole", limit=limit, tasks=tasks, **FAST
    )
    assert _digests(resumed) == _digests(whole)
    assert _release(out) == _release(tmp_path / "whole")


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("pdeathsig", [True, False])  # the kernel's guard; the portable poller
def test_each_guard_alone_ends_a_worker_whose_parent_was_killed(pdeathsig):
    script = (
        "import multiprocessing, os, sys, time\n"
        "from misi_bench.builder.store.workers import watch_parent\n"
        "def child(parent):\n"
        f"    watch_parent(parent, interval=0.2, pdeathsig={pdeathsig})\n"
        "    time.sleep(60)\n"
        "if __name__ == '__main__':\n"
        "    p = multiprocessing.get_context('fork').Process(target=child, args=(os.getpid(),))\n"
        "    p.start(); print(p.pid, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    time.sleep(0.5)
    assert _running(child)
    proc.kill()
    proc.wait()
    start = time.time()
    while time.time() - start < 5 and _running(child):
        time.sleep(0.05)
    alive = _running(child)
    if alive:
        os.kill(child, 9)
    assert not alive, "the worker outlived its parent by 5 s"

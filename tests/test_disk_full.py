"""Disk full and read-only folders give one line naming the path (issue 39), on real file
systems (:mod:`disk_support`: a small real tmpfs, or a kernel file-size limit): ``eval``
filling its run folder mid-run (no asyncio traceback; the answers written are kept and a rerun
resumes), ``push`` staging its release in a full temporary folder, and a read-only folder that
holds an interrupted publish switch."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from misi_bench.builder.core.errors import MisiError
from misi_bench.builder.dataset import hub, publish
from misi_bench.eval_plugins.api.testing_server import Double, DoubleServer

from cli_support import CLI, eval_args
from disk_support import file_size_limit, full_folder, limit_file_size, read_only_folder
from test_hub import REPO, TOKEN, make_fake_folder, online  # noqa: F401 (online: a fixture)


def _eval(url: str, data_dir, out: Path, limit: int | None = None):
    args = eval_args(url, data_dir, out, "--concurrency", "4", "--no-progress")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    env.pop("MISI_BENCH_DEBUG", None)
    return subprocess.run(
        [*CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size(limit),
        timeout=300,
    )


def _error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("misi-bench: error:")]


def test_eval_on_a_full_disk_is_one_line_naming_the_file_and_resumes(data_dir, tmp_path):
    with DoubleServer(Double()) as srv, full_folder(tmp_path) as (folder, limit):
        out = folder / "run"
        proc = _eval(srv.url, data_dir, out, limit)
        assert proc.returncode == 2, proc.stderr[-3000:]
        errors = _error_lines(proc.stderr)
        assert len(errors) == 1, proc.stderr[-3000:]
        assert f"{out / 'predictions.jsonl'}: cannot write (" in errors[0]
        assert "rerun after freeing space resumes" in errors[0]
        assert "Traceback" not in proc.stderr and "Task exception" not in proc.stderr
        assert len(proc.stderr.splitlines()) <= 3, proc.stderr
        saved = [json.loads(ln) for ln in (out / "predictions.jsonl").read_text().splitlines()]
        assert saved, "answers were written before the disk filled"
        asked_before = srv.state.requests
        # room again (the run folder moved to a roomy disk): the rerun resumes, asks only the rest
        roomy = tmp_path / "roomy"
        roomy.mkdir()
        for name in ("run.json", "predictions.jsonl", "failures.jsonl"):
            (roomy / name).write_bytes((out / name).read_bytes())
    with DoubleServer(Double()) as srv2:
        proc = _eval(srv2.url, data_dir, roomy)
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = json.loads((roomy / "report.json").read_text())
        total = report["selection"]["questions"]
        assert srv2.state.requests == total - len(saved) and report["missing"] == []
        assert asked_before >= len(saved)


def test_push_staging_on_a_full_disk_names_the_folder(online, tmp_path, monkeypatch):  # noqa: F811
    import tempfile

    folder = make_fake_folder(tmp_path / "fake")
    with full_folder(tmp_path / "tmp", room=4096) as (tmp, limit):
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        with file_size_limit(limit), pytest.raises(MisiError) as err:
            hub.push_dataset(
                folder, REPO, tag="v0.3.0", token=TOKEN, endpoint=online.endpoint, allow_small=True
            )
    text = str(err.value)
    assert "\n" not in text and f"in {tmp};" in text and "cannot write (" in text
    assert "nothing was pushed" in text and TOKEN not in text
    assert not [r for r in online.requests if "/commit/" in r[1]]
    assert "v0.3.0" not in online.repos[REPO].tags


def _interrupted_switch(folder: Path) -> Path:
    """``folder`` as a kill right after the journal leaves it: the new release staged beside
    the old one and the journal written, nothing moved yet."""
    staged = folder / publish.PUBLISH_DIR / "newrelease"
    staged.mkdir(parents=True)
    for name in ("manifest.json", "README.md"):
        (staged / name).write_bytes((folder / name).read_bytes())
    journal = {
        "staged": staged.name,
        "old": publish._ordered(publish.release_entries(folder)),
        "new": ["manifest.json", "README.md"],
    }
    path = folder / publish.PUBLISH_DIR / publish.JOURNAL
    path.write_text(json.dumps(journal) + "\n", encoding="utf-8")
    return path


def test_read_only_folder_with_an_interrupted_switch_is_one_clear_line(tmp_path):
    folder = make_fake_folder(tmp_path / "fake")
    (folder / ".misi-lock").touch()  # as any earlier writer leaves it
    journal = _interrupted_switch(folder)
    before = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    with read_only_folder(folder):
        with pytest.raises(MisiError) as err:
            publish.recover(folder)
        text = str(err.value)
        assert "\n" not in text and text.startswith(f"{folder}: cannot finish the interrupted")
        assert str(journal) in text and "cannot be written (" in text
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        env.pop("MISI_BENCH_DEBUG", None)
        proc = subprocess.run(
            [*CLI, "push", str(folder), "--repo", REPO],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert _error_lines(proc.stderr) == [f"misi-bench: error: {text}"]
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == before
    assert publish.recover(folder) and not journal.exists()  # writable again: it finishes

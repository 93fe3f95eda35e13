"""Issue 49, item 6: a full disk names the file and leaves no torn file, on a real full file
system (:mod:`disk_support`): ``score --json-out`` and ``--per-item`` (an earlier file there is
kept as it was), ``export-sft`` (no partial folder), and a build's unit files (the units
finished before are kept). Real builds (``conftest.cli_build`` and the embedded samples)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_support import CLI, one_error_line
from disk_support import full_folder, limit_file_size
from test_score_cli import rows_of


def _cli(*args, limit=None, cwd=None):
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    env.pop("MISI_BENCH_DEBUG", None)
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=600, cwd=cwd,
        preexec_fn=limit_file_size(limit),
    )  # fmt: skip


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_score_outputs_on_a_full_disk(cli_build, tmp_path):
    preds = tmp_path / "p.jsonl"
    reasoning = "Looking at the two views in turn, " * 40  # a reply with its reasoning
    preds.write_text(
        "".join(
            json.dumps({"id": r["id"], "prediction": reasoning + "Answer: " + r["answer"]}) + "\n"
            for config in ("rotation", "pocket_ligand")
            for r in rows_of(cli_build, config)
        )
    )
    with full_folder(tmp_path, room=8192) as (full, limit):  # a page for the earlier file
        (full / "items.jsonl").write_text("an earlier file\n")
        before = _files(full)
        base = ["score", "--dataset", str(cli_build), "--no-baselines", "--predictions", str(preds)]
        proc = _cli(*base, "--per-item", str(full / "items.jsonl"), limit=limit)
        one_error_line(proc, str(full / "items.jsonl"), "cannot write", code=None)
        assert _files(full) == before  # the earlier file whole, no temporary file left
        proc = _cli(*base, "--json-out", str(full / "score.json"), limit=limit)
        one_error_line(proc, str(full / "score.json"), "cannot write", code=None)
        assert _files(full) == before


def test_export_sft_on_a_full_disk(cli_build, tmp_path):
    with full_folder(tmp_path, room=8192) as (full, limit):
        out = full / "sft"
        proc = _cli("export-sft", str(cli_build), "--format", "swift", "--out", str(out),
                    "--quiet", limit=limit)  # fmt: skip
        line = one_error_line(proc, "cannot write", str(out), code=None)
        assert "partial export was removed" in line
        assert not any(full.iterdir())  # no partial folder, no output


def test_unit_files_on_a_full_disk(tmp_path):
    with full_folder(tmp_path, room=16 * 1024) as (full, limit):
        out = full / "build"
        proc = _cli("build", "--source", "samples", "--limit", "2", "--configs", "rotation",
                    "--out", str(out), "--quiet", "--workers", "1", limit=limit)  # fmt: skip
        line = one_error_line(proc, "cannot write", str(out / ".work"), code=None)
        assert "units finished before are kept" in line
        leftovers = [p for p in out.rglob("*") if ".tmp" in p.name]
        assert not leftovers, leftovers

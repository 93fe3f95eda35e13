"""Issue 49, item 1: a shard that disagrees with its build's ``manifest.json`` is never scored.
Every reading route (``score``, ``eval``'s question source, ``serve-mock``, ``report --dataset``,
the human app, the harness loaders, ``export-sft``) refuses it in one line naming the file. The
build is the session's real command-line build (``conftest.cli_build``), one T9 answer edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core import shards as shard_mod
from misi_bench.builder.core.errors import ShardMismatch
from misi_bench.builder.core.shards import config_shards

from test_score_cli import one_error_line, score


def _edit_one_t9_answer(folder: Path) -> tuple[Path, dict[str, str]]:
    """Rewrite the first test shard of pocket_ligand with one answer cut to its first bond (same
    schema, same rows otherwise); returns the shard and the original answers by id."""
    shard = config_shards(folder, "pocket_ligand", "test")[0]
    table = pq.read_table(shard)
    answers = table.column("answer").to_pylist()
    gold = dict(zip(table.column("id").to_pylist(), answers))
    k = next(i for i, a in enumerate(answers) if ";" in a)
    answers[k] = answers[k].split("; ")[0]
    i = table.schema.get_field_index("answer")
    table = table.set_column(i, table.schema.field(i), pa.array(answers, pa.string()))
    pq.write_table(table, shard)
    return shard, gold


@pytest.fixture
def edited(cli_build, tmp_path):
    folder = Path(shutil.copytree(cli_build, tmp_path / "build"))
    shard, gold = _edit_one_t9_answer(folder)
    return folder, shard, gold


def test_score_refuses_an_edited_shard(edited, tmp_path):
    folder, shard, gold = edited
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": i, "prediction": a}) + "\n" for i, a in gold.items())
    )
    line = one_error_line(
        score(folder, "--predictions", str(preds), "--configs", "pocket_ligand"),
        shard.name,
        "sha256 differs",
    )
    assert "manifest.json" in line


def test_every_reading_route_refuses_an_edited_shard(edited):
    from misi_bench.eval_plugins.api.data import QuestionSource
    from misi_bench.eval_plugins.api.mock import MockAnswers
    from misi_bench.eval_plugins.common import gold_by_id, load_split, with_build_column
    from misi_bench.eval_plugins.finetune.source import config_shards as export_shards
    from misi_bench.eval_plugins.human.session import load_questions, records
    from misi_bench.eval_plugins.report.levels import chance_levels

    folder, shard, _ = edited
    routes = {
        "eval": lambda: QuestionSource(str(folder)).records(["pocket_ligand"], "test"),
        "eval questions": lambda: list(
            QuestionSource(str(folder)).questions(["pocket_ligand"], "test", {"x"})
        ),
        "serve-mock": lambda: MockAnswers(str(folder)),
        "report --dataset": lambda: chance_levels(folder, "test"),
        "human": lambda: load_questions(folder, "test"),
        "human records": lambda: records(folder, "test"),
        "harness gold": lambda: gold_by_id(folder),
        "harness loader": lambda: load_split("pocket_ligand", "test", path=str(folder)),
        "export-sft": lambda: export_shards(folder, ["pocket_ligand"], "test"),
    }
    for name, route in routes.items():
        with pytest.raises(ShardMismatch) as err:
            route()
        message = str(err.value)
        assert str(shard) in message and "\n" not in message, (name, message)
    # lmms-eval loads a local build itself; the hook that adds the build column checks it
    import datasets

    with pytest.raises(ShardMismatch, match=shard.name):
        with_build_column(datasets.Dataset.from_dict({"id": ["x"]}), str(folder))


def test_a_shard_the_manifest_does_not_list_is_refused(cli_build, tmp_path):
    folder = Path(shutil.copytree(cli_build, tmp_path / "build"))
    first = config_shards(folder, "rotation", "test")[0]
    extra = first.with_name("test-00001-of-00001.parquet")
    shutil.copyfile(first, extra)
    with pytest.raises(ShardMismatch, match=f"{extra.name}: not listed in"):
        shard_mod.checked_shards(folder, "rotation", "test")


def test_each_file_is_hashed_once_per_size_and_mtime(cli_build, tmp_path, monkeypatch):
    folder = Path(shutil.copytree(cli_build, tmp_path / "build"))
    calls = []
    real = shard_mod.hashlib.sha256
    monkeypatch.setattr(shard_mod.hashlib, "sha256", lambda *a: calls.append(1) or real(*a))
    paths = shard_mod.checked_shards(folder, "rotation", "test")
    assert len(calls) == len(paths) >= 1
    shard_mod.checked_shards(folder, "rotation", "test")
    assert len(calls) == len(paths)  # unchanged files: not hashed again
    _edit_one_t9_answer(folder)  # a new mtime: hashed again, and refused
    with pytest.raises(ShardMismatch):
        shard_mod.checked_shards(folder, "pocket_ligand", "test")


def test_a_hub_tag_whose_shards_disagree_with_its_manifest_is_refused(tmp_path):
    """A tag pushed to the Hub double whose stored shard is then edited (one answer): ``score``
    from the tag, and ``report --dataset`` / the human app's download, refuse it naming the
    shard."""
    import io
    import os
    import subprocess
    import sys

    from misi_bench.builder.dataset import hub

    from test_hub import REPO, TOKEN, HubDouble, make_fake_folder

    folder = make_fake_folder(tmp_path / "fake")
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "MISI_BENCH_REVISION")
    }
    with HubDouble() as double, pytest.MonkeyPatch.context() as mp:
        from huggingface_hub import constants

        mp.delenv("HF_HUB_OFFLINE", raising=False)
        mp.setattr(constants, "HF_HUB_OFFLINE", False)
        mp.setenv("NO_PROXY", "127.0.0.1,localhost")
        pushed = hub.push_dataset(
            folder, REPO, tag="v0.1.0", token=TOKEN, endpoint=double.endpoint, allow_small=True
        )
        files = double.repos[REPO].commits[pushed.commit_oid]["files"]
        rel = "rotation/test-00000-of-00001.parquet"
        # before the edit, the harness loader reads the tag's checked shards (its own cache)
        code = (
            "from misi_bench.eval_plugins.common import load_split\n"
            f"print(len(load_split('rotation', 'test', {REPO!r}, 'v0.1.0')))\n"
        )
        good = {**env, "HF_ENDPOINT": double.endpoint, "HF_HOME": str(tmp_path / "good_home")}
        good.update(NO_PROXY="127.0.0.1,localhost", HF_HUB_DISABLE_TELEMETRY="1")
        proc = subprocess.run([sys.executable, "-c", code], env=good, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        rows = pq.read_table(io.BytesIO(files[rel])).num_rows
        assert proc.stdout.split() == [str(rows)], proc.stdout + proc.stderr[-2000:]
        table = pq.read_table(io.BytesIO(files[rel]))
        answers = ["roll x 90"] * table.num_rows
        i = table.schema.get_field_index("answer")
        table = table.set_column(i, table.schema.field(i), pa.array(answers, pa.string()))
        out = io.BytesIO()
        pq.write_table(table, out)
        files[rel] = out.getvalue()  # the tag now serves a shard its manifest does not list
        preds = tmp_path / "p.jsonl"
        preds.write_text(json.dumps({"id": "rotation-0002", "prediction": "roll z -45"}) + "\n")
        env.update(HF_ENDPOINT=double.endpoint, HF_HOME=str(tmp_path / "cli_home"))
        env.update(NO_PROXY="127.0.0.1,localhost", HF_HUB_DISABLE_TELEMETRY="1")
        code = "import sys; from misi_bench import main; sys.exit(main(sys.argv[1:]))"
        args = ["score", "--dataset", REPO, "--revision", "v0.1.0", "--predictions", str(preds),
                "--configs", "rotation", "--no-baselines"]  # fmt: skip
        proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 2, proc.stdout[-1000:] + proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        assert f"{rel}: sha256 differs" in proc.stderr.replace(os.sep, "/"), proc.stderr[-1000:]
        # report --dataset and the human app read the tag's snapshot (local_copy)
        code = (
            "from misi_bench.eval_plugins.common import local_copy\n"
            "from misi_bench.eval_plugins.report.levels import chance_levels\n"
            f"folder, _ = local_copy({REPO!r}, 'v0.1.0', ('test',))\n"
            "try:\n    chance_levels(folder, 'test')\n"
            "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert proc.stdout.startswith("ShardMismatch"), proc.stdout + proc.stderr[-2000:]
        assert "sha256 differs" in proc.stdout
        # the harness loaders (lm-eval's and VLMEvalKit's load_split, lmms-eval's process_docs
        # hook) fetch the tag's shards and refuse them before any row is read
        code = (
            "import datasets\n"
            "from misi_bench.eval_plugins.common import load_split, with_build_column\n"
            f"for call in (lambda: load_split('rotation', 'test', {REPO!r}, 'v0.1.0'),\n"
            f"             lambda: load_split('all', 'test', {REPO!r}, 'v0.1.0'),\n"
            "             lambda: with_build_column(datasets.Dataset.from_dict({'id': ['x']},\n"
            f"                 split='test'), {REPO!r}, 'v0.1.0')):\n"
            "    try:\n        call(); print('read')\n"
            "    except Exception as exc:\n        print(type(exc).__name__, exc)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        lines = proc.stdout.splitlines()
        assert len(lines) == 3, proc.stdout + proc.stderr[-2000:]
        for line in lines:
            assert line.startswith("ShardMismatch") and "sha256 differs" in line, line
            assert rel in line.replace(os.sep, "/"), line

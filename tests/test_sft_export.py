"""``misi-bench export-sft``: each export is read back by its consumer's own code (datasets + TRL
here; LLaMA-Factory and ms-swift in side venvs, see sft_consumers.py) and compared with the
source rows of a real build; one real TRL optimisation step on a tiny random Qwen2-VL."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from misi_bench.builder.core.registry import TASK_NAMES
from misi_bench.eval_plugins.finetune.export import MANIFEST, export_sft

import misi_bench

#: Configs the side-venv consumers preprocess in full: 4 images per row and 11 per row.
CONSUMER_CONFIGS = ("translation", "translation_rotation")
REPO_ROOT = Path(misi_bench.__file__).resolve().parent


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def source(data_dir):
    """Train rows of the build in export order: list of dicts (id, task, images bytes, question, answer)."""
    rows = []
    for task in TASK_NAMES:
        for shard in sorted((Path(data_dir) / task).glob("train-*.parquet")):
            for r in pq.read_table(
                shard, columns=["id", "task", "images", "question", "answer"]
            ).to_pylist():
                rows.append({**r, "images": [i["bytes"] for i in r["images"]]})
    assert len({r["task"] for r in rows}) >= 5, (
        "the fixture build should have train rows for most tasks"
    )
    return rows


@pytest.fixture(scope="module")
def exports(data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("sft")
    return {
        fmt: export_sft(data_dir, out / fmt, fmt, progress=False)
        for fmt in ("hf", "llamafactory", "swift")
    }


def _by_id(rows):
    return {r["id"]: r for r in rows}


# --- Hugging Face / TRL -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hf_dataset(exports, tmp_path_factory):
    import datasets

    # a cache of its own: the shared ~/.cache could hold an earlier export of the same path
    return datasets.load_dataset(
        str(exports["hf"].out), split="train", cache_dir=str(tmp_path_factory.mktemp("hf_cache"))
    )


def test_hf_export_loads_with_datasets_and_matches_source(hf_dataset, source, exports):
    import datasets

    assert hf_dataset["id"] == [r["id"] for r in source]
    raw = hf_dataset.cast_column("images", datasets.List(datasets.Image(decode=False)))
    for row, src in zip(raw, source):
        user, assistant = row["messages"]
        assert user["role"] == "user" and assistant["role"] == "assistant"
        kinds = [part["type"] for part in user["content"]]
        assert kinds == ["image"] * len(src["images"]) + ["text"], src["id"]
        assert user["content"][-1]["text"] == src["question"]
        assert assistant["content"] == [{"type": "text", "text": src["answer"]}]
        assert [_sha(i["bytes"]) for i in row["images"]] == [_sha(b) for b in src["images"]], src[
            "id"
        ]
    first = hf_dataset[0]["images"][0]
    assert first.size == (512, 512)
    assert exports["hf"].rows == {
        t: sum(r["task"] == t for r in source) for t in exports["hf"].rows
    }


@pytest.fixture(scope="module")
def tiny_processor_for(hf_dataset):
    from sft_support import tiny_processor

    texts = [
        part["text"]
        for msgs in hf_dataset["messages"]
        for m in msgs
        for part in m["content"]
        if part["text"]
    ]
    return tiny_processor(texts)


@pytest.mark.slow
def test_trl_collator_puts_images_in_prompt_order(hf_dataset, source, tiny_processor_for):
    import torch
    from misi_bench.eval_plugins.common import to_pil_rgb
    from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

    proc = tiny_processor_for
    picks = [
        hf_dataset["task"].index("translation_rotation"),
        hf_dataset["task"].index("translation"),
    ]
    batch = DataCollatorForVisionLanguageModeling(proc)([hf_dataset[i] for i in picks])
    start = proc.tokenizer.convert_tokens_to_ids("<|vision_start|>")
    src = [source[i] for i in picks]
    assert [int((ids == start).sum()) for ids in batch["input_ids"]] == [
        len(s["images"]) for s in src
    ]
    expected = proc.image_processor(
        images=[to_pil_rgb(b) for s in src for b in s["images"]], return_tensors="pt"
    )
    assert torch.equal(batch["image_grid_thw"], expected["image_grid_thw"])
    assert torch.allclose(batch["pixel_values"], expected["pixel_values"])
    answer_ids = proc.tokenizer(src[1]["answer"], add_special_tokens=False)["input_ids"]
    labels = [t for t in batch["labels"][1].tolist() if t != -100]
    assert any(labels[k : k + len(answer_ids)] == answer_ids for k in range(len(labels))), (
        "answer not in labels"
    )


@pytest.mark.slow
def test_trl_sft_trainer_step_on_tiny_vlm(hf_dataset, tiny_processor_for, tmp_path):
    import torch
    from trl import SFTConfig, SFTTrainer

    from sft_support import tiny_model

    model = tiny_model(tiny_processor_for)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    tasks = hf_dataset["task"]
    rows = hf_dataset.select(
        [
            tasks.index("translation"),
            tasks.index("residue_ligand"),
            tasks.index("interaction_location"),
            tasks.index("docking"),
        ]
    )
    args = SFTConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=4,
        learning_rate=1e-2,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
        max_length=None,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=rows, processing_class=tiny_processor_for
    )
    result = trainer.train()
    assert result.global_step == 1
    assert math.isfinite(result.training_loss) and result.training_loss > 0
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert any(n.startswith("model.visual") or ".visual." in n for n in changed), (
        "vision tower untouched"
    )
    assert len(changed) == len(before)


# --- LLaMA-Factory and ms-swift (their own loaders, side venvs) ------------------------------------


def _run_consumer(name: str, script: str, export_dir: Path, tmp_path: Path) -> dict:
    from sft_consumers import consumer_python

    python = consumer_python(name)
    result = tmp_path / f"{name}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "DISABLE_VERSION_CHECK": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "hf_cache"),
        "MODELSCOPE_CACHE": str(tmp_path / "ms_cache"),
    }
    proc = subprocess.run(
        [str(python), str(Path(__file__).parent / script), str(export_dir), str(result)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return json.loads(result.read_text())


def _check_media(paths, src, export_dir: Path):
    assert len(paths) == len(src["images"]), src["id"]
    for path, data in zip(paths, src["images"]):
        resolved = Path(path)
        assert resolved.is_absolute() and resolved.is_relative_to(export_dir), path
        assert _sha(resolved.read_bytes()) == _sha(data), (
            f"{src['id']}: image order or bytes differ"
        )


def _no_space(text: str) -> str:
    return "".join(text.split())


@pytest.mark.slow
def test_llamafactory_loads_and_preprocesses_export(data_dir, source, tmp_path):
    out = export_sft(
        data_dir, tmp_path / "lf", "llamafactory", configs=CONSUMER_CONFIGS, progress=False
    ).out
    seen = _run_consumer("llamafactory", "sft_consumer_llamafactory.py", out, tmp_path)
    src_rows = [r for r in source if r["task"] in CONSUMER_CONFIGS]
    assert seen["n_preprocessed"] == len(src_rows) == len(seen["rows"])
    for row, src in zip(seen["rows"], src_rows):
        assert row["prompt"] == [
            {"role": "user", "content": "<image>" * len(src["images"]) + src["question"]}
        ]
        assert row["response"] == [{"role": "assistant", "content": src["answer"]}]
        _check_media(row["images"], src, out)
        assert row["vision_starts"] == len(src["images"])
        assert row["image_pads"] == 4 * len(src["images"])  # 56 x 56 px = 4 merged tokens each
        assert _no_space(row["label_text"]) == _no_space(src["answer"])


@pytest.mark.slow
def test_swift_loads_and_encodes_export(data_dir, source, tmp_path):
    out = export_sft(
        data_dir, tmp_path / "swift", "swift", configs=CONSUMER_CONFIGS, progress=False
    ).out
    seen = _run_consumer("ms-swift", "sft_consumer_swift.py", out, tmp_path)
    src_rows = [r for r in source if r["task"] in CONSUMER_CONFIGS]
    assert len(seen["rows"]) == len(src_rows)
    for row, src in zip(seen["rows"], src_rows):
        user = "<image>" * len(src["images"]) + src["question"]
        assert row["messages"] == [
            {"role": "user", "content": user},
            {"role": "assistant", "content": src["answer"]},
        ]
        _check_media(row["images"], src, out)
        assert row["vision_starts"] == row["image_grids"] == len(src["images"])
        assert row["image_pads"] >= len(src["images"])
        assert _no_space(row["label_text"]) == _no_space(src["answer"])


# --- the export itself --------------------------------------------------------------------------


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): _sha(p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_exports_are_deterministic_and_write_each_picture_once(data_dir, source, exports, tmp_path):
    distinct = {_sha(b) for r in source for b in r["images"]}
    refs = sum(len(r["images"]) for r in source)
    assert len(distinct) < refs  # the reference views repeat, so deduplication matters
    for fmt, result in exports.items():
        again = export_sft(data_dir, tmp_path / fmt, fmt, progress=False)
        assert _tree(again.out) == _tree(result.out), fmt
        manifest = json.loads((result.out / MANIFEST).read_text())
        assert manifest["total_rows"] == len(source) and manifest["image_refs"] == refs
        build = json.loads((Path(data_dir) / "manifest.json").read_text())["config_hash"]
        assert manifest["config_hash"] == build  # the export names its build (issue 30 item 7)
        assert manifest["dataset"] == {  # and its source's provenance (issue 40 item 1)
            "dataset": str(Path(data_dir).resolve()),
            "revision": None,
            "commit": None,
            "config_hash": build,
            "version": None,
        }
        if fmt == "hf":
            continue
        files = sorted((result.out / "images").rglob("*.png"))
        assert len(files) == result.images_written == manifest["image_files"] == len(distinct)
        assert {p.stem for p in files} == distinct
    lf = json.loads((exports["llamafactory"].out / "misi_bench_train.json").read_text())
    swift = [
        json.loads(line)
        for line in (exports["swift"].out / "misi_bench_train.jsonl").read_text().splitlines()
    ]
    assert [r["images"] for r in lf] == [r["images"] for r in swift]
    info = json.loads((exports["llamafactory"].out / "dataset_info.json").read_text())
    assert info["misi_bench_train"]["file_name"] == "misi_bench_train.json"


def test_hf_export_is_smaller_than_its_image_references(exports, source):
    """Dictionary-encoded image column: repeated views inside a row group are stored once."""
    raw_bytes = sum(len(b) for r in source for b in r["images"])
    parquet = sum(p.stat().st_size for p in (exports["hf"].out / "data").glob("*.parquet"))
    assert parquet < 0.75 * raw_bytes


def test_test_split_needs_flag_and_warns(data_dir, tmp_path, capsys, caplog):
    out = tmp_path / "t"
    assert (
        misi_bench.main(
            ["export-sft", str(data_dir), "--format", "swift", "--out", str(out), "--split", "test"]
        )
        == 2
    )
    assert "--allow-test-split" in capsys.readouterr().err
    assert not out.exists()
    with caplog.at_level(logging.WARNING):
        rc = misi_bench.main(
            [
                "export-sft",
                str(data_dir),
                "--format",
                "swift",
                "--out",
                str(out),
                "--split",
                "test",
                "--allow-test-split",
                "--configs",
                "T2",
                "--quiet",
            ]
        )
    assert rc == 0
    printed = capsys.readouterr().out
    assert any(
        r.levelno == logging.WARNING and "contamination" in r.getMessage() for r in caplog.records
    )
    rows = [json.loads(line) for line in (out / "misi_bench_test.jsonl").read_text().splitlines()]
    test_ids = pq.read_table(
        next((Path(data_dir) / "rotation").glob("test-*.parquet")), columns=["id"]
    ).column("id")
    assert [r["id"] for r in rows] == test_ids.to_pylist()
    assert f"{len(rows)} test rows" in printed


def test_bad_inputs_get_clear_errors(data_dir, tmp_path, capsys):
    missing = tmp_path / "nope"
    assert (
        misi_bench.main(
            ["export-sft", str(missing), "--format", "hf", "--out", str(tmp_path / "o")]
        )
        == 2
    )
    assert str(missing) in capsys.readouterr().err
    assert (
        misi_bench.main(
            [
                "export-sft",
                str(data_dir),
                "--format",
                "hf",
                "--out",
                str(tmp_path / "o"),
                "--configs",
                "no-such-task",
            ]
        )
        == 2
    )
    assert "no-such-task" in capsys.readouterr().err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    assert (
        misi_bench.main(
            ["export-sft", str(data_dir), "--format", "hf", "--out", str(busy), "--overwrite"]
        )
        == 2
    )
    assert "earlier export" in capsys.readouterr().err and (busy / "keep.txt").exists()
    assert (
        misi_bench.main(
            [
                "export-sft",
                "no-such-owner/no-such-repo",
                "--format",
                "hf",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )  # the Hub is offline in the tests
    assert "no-such-owner/no-such-repo: cannot fetch" in capsys.readouterr().err
    empty = tmp_path / "empty"
    (empty / "translation").mkdir(parents=True)
    assert (
        misi_bench.main(["export-sft", str(empty), "--format", "hf", "--out", str(tmp_path / "o")])
        == 2
    )
    assert "no train shards" in capsys.readouterr().err


def test_export_from_a_hub_repo_fetches_only_the_wanted_shards(
    data_dir, source, tmp_path, monkeypatch
):
    """Source = a Hub repo id, served by test_hub's protocol double of the Hub (real client)."""
    from huggingface_hub import constants

    from test_hub import HubDouble, _Repo

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf_home" / "hub"))
    repo_id = "misi-test/sft-source"
    files = {
        p.relative_to(data_dir).as_posix(): p.read_bytes()
        for p in sorted(Path(data_dir).rglob("*.parquet"))
        if p.parent.name in TASK_NAMES
    }
    with HubDouble() as double:
        repo = double.repos[repo_id] = _Repo(repo_id, private=False)
        repo.branches["main"] = repo.add_commit(repo.branches["main"], files, "shards")
        result = export_sft(
            repo_id,
            tmp_path / "out",
            "swift",
            configs=["docking"],
            endpoint=double.endpoint,
            progress=False,
        )
        fetched = [
            path for method, path, _ in double.requests if "/resolve/" in path and method == "GET"
        ]
    rows = [
        json.loads(line)
        for line in (result.out / "misi_bench_train.jsonl").read_text().splitlines()
    ]
    assert [r["id"] for r in rows] == [r["id"] for r in source if r["task"] == "docking"]
    assert fetched and all("/docking/train-" in path for path in fetched), fetched
    recorded = json.loads((result.out / MANIFEST).read_text())["dataset"]
    assert recorded["dataset"] == repo_id and recorded["revision"] is None
    assert recorded["commit"] == repo.branches["main"]  # the commit the shards were read at

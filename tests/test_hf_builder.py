"""The in-process ``datasets`` builder (builder/hf_builder.py)."""

from __future__ import annotations

import io
import json

import datasets
import pytest
from misi_bench.builder.dataset import hf_builder
from misi_bench.builder.operations.language import Roll, parse_operations
from misi_bench.builder.store.parquet import features
from misi_bench.builder.tasks import TASKS
from PIL import Image


def test_installed_datasets_supports_the_builder():
    """The builder relies on datasets >= 4 (``datasets.List`` in the schema, no loading scripts)."""
    major = int(datasets.__version__.split(".")[0])
    assert major >= 4, datasets.__version__
    assert isinstance(features()["images"], datasets.List)
    assert issubclass(hf_builder.MisiBenchBuilder, datasets.GeneratorBasedBuilder)


def test_configs_are_the_nine_tasks_plus_all():
    names = [c.name for c in hf_builder.MisiBenchBuilder.BUILDER_CONFIGS]
    assert names == [*TASKS, "all"]
    assert all(
        isinstance(c, hf_builder.MisiBenchConfig)
        for c in hf_builder.MisiBenchBuilder.BUILDER_CONFIGS
    )
    cfg = hf_builder.MisiBenchConfig(name="all")
    assert cfg.tasks == tuple(TASKS)
    assert cfg.source == "samples" and cfg.seed == 0 and cfg.limit is None and cfg.image_size == 512
    a, b = (
        hf_builder.MisiBenchConfig(name="rotation", limit=3),
        hf_builder.MisiBenchConfig(name="rotation", limit=4),
    )
    assert a.build_key() != b.build_key()
    assert a.build_key() == hf_builder.MisiBenchConfig(name="rotation", limit=3).build_key()


def _png(shade: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (24, 24), (shade, 60, 120)).save(buf, format="PNG")
    return buf.getvalue()


def _fake_build(calls: list):
    """Stand-in for build_dataset writing the same layout (shards + manifest counts) for the tasks asked."""
    from misi_bench.builder.store import manifest as manifest_io
    from misi_bench.builder.store import parquet as write

    def build(options):
        cfg, out, tasks = options.config, options.out, options.config.tasks
        assert options.progress is False
        calls.append(
            {
                "source": cfg.source,
                "tasks": tuple(tasks),
                "limit": cfg.limit,
                "seed": cfg.seed,
                "profile": cfg.profile,
            }
        )
        counts = {}
        for task in tasks:
            counts[task] = {}
            for split, ids in (("train", [0, 1]), ("test", [2, 3]), ("tiny", [2])):
                rows = [
                    {
                        "id": f"{task}-{k:04d}",
                        "task": task,
                        "split": split,
                        "pdb_id": f"1ab{k}",
                        "images": [{"bytes": _png(30 * k), "path": None}],
                        "image_views": ["front"],
                        "question": "Which roll?",
                        "options": [],
                        "answer": str(Roll("y", 15 * (k + 1))),
                        "answer_format": "fill_in",
                        "metadata": "{}",
                    }
                    for k in ids
                ]
                write.write_split(rows, out / task, split, max_bytes=1 << 30)
                counts[task][split] = len(rows)
        manifest_io.write_manifest(out, {"counts": counts, "version": None})
        return {"counts": counts}

    return build


def test_builder_plumbing_with_a_stand_in_build(monkeypatch, tmp_path):
    """Config options reach the build; rows come out with declared features, decoded images, row-id keys."""
    calls: list = []
    monkeypatch.setattr(hf_builder, "build_dataset", _fake_build(calls))
    builder = hf_builder.MisiBenchBuilder(
        config_name="rotation", source="samples", limit=3, seed=7, cache_dir=str(tmp_path)
    )
    builder.download_and_prepare()
    assert calls == [
        {"source": "samples", "tasks": ("rotation",), "limit": 3, "seed": 7, "profile": "paper"}
    ]
    assert set(builder.info.splits) == {"train", "test", "tiny"}
    test = builder.as_dataset(split="test")
    assert test.features == features()
    assert [r["id"] for r in test] == ["rotation-0002", "rotation-0003"]
    row = test[0]
    assert isinstance(row["images"][0], Image.Image)
    assert parse_operations(row["answer"]) == (Roll("y", 45),)
    assert str(tmp_path) in str(builder._build_folder())

    # a second preparation reuses the cache: no new build
    again = hf_builder.MisiBenchBuilder(
        config_name="rotation", source="samples", limit=3, seed=7, cache_dir=str(tmp_path)
    )
    again.download_and_prepare()
    assert len(calls) == 1

    # "all" asks the build for every task
    hf_builder.MisiBenchBuilder(
        config_name="all", limit=3, cache_dir=str(tmp_path)
    ).download_and_prepare()
    assert calls[-1]["tasks"] == tuple(TASKS)


def test_unknown_config_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        hf_builder.MisiBenchBuilder(config_name="nope", cache_dir=str(tmp_path))


@pytest.mark.slow
def test_builder_generates_rotation_from_samples(tmp_path):
    """End to end: the real generator runs in process and the rows load through ``datasets``.

    Four complexes (not three): with fewer than four the split rule may leave ``test`` empty
    (``sources.assign_splits`` only guarantees two test complexes from four complexes on).
    """
    builder = hf_builder.MisiBenchBuilder(
        config_name="rotation", source="samples", limit=4, cache_dir=str(tmp_path)
    )
    builder.download_and_prepare()
    test = builder.as_dataset(split="test")
    assert len(test) > 0
    manifest = json.loads((builder._build_folder() / "manifest.json").read_text())
    assert len(test) == manifest["counts"]["rotation"]["test"]
    for row in test:
        assert row["task"] == "rotation" and row["split"] == "test"
        ops = parse_operations(row["answer"])
        assert len(ops) == 1 and isinstance(ops[0], Roll)
        assert row["images"] and all(isinstance(img, Image.Image) for img in row["images"])
        assert len(row["images"]) == len(row["image_views"])
    assert len({row["id"] for row in test}) == len(test)

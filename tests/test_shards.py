"""The one spelling of the shard file pattern (``builder/core/shards.py``): what the writer
names, every reader's glob finds, in order, and nothing else (work units, part files)."""

from __future__ import annotations

import fnmatch

from misi_bench.builder.core import shards


def test_names_and_globs_agree_and_order_by_index(tmp_path):
    names = [shards.shard_name("train", k, 12) for k in range(12)]
    assert names[0] == "train-00000-of-00012.parquet"
    folder = tmp_path / "rotation"
    folder.mkdir()
    for name in [*reversed(names), shards.shard_name("test", 0, 1)]:
        (folder / name).write_bytes(b"")
    # what the build leaves beside shards is no shard: a part file, a work unit, another config
    (folder / ".train-part00000.parquet").write_bytes(b"")
    (tmp_path / ".work").mkdir()
    (tmp_path / ".work" / "1abc.parquet").write_bytes(b"")
    found = shards.config_shards(tmp_path, "rotation", "train")
    assert [p.name for p in found] == names
    assert all(
        fnmatch.fnmatch(f"rotation/{n}", shards.config_glob("rotation", "train")) for n in names
    )
    assert sorted(
        p.relative_to(tmp_path).as_posix() for p in tmp_path.glob(shards.SHARD_GLOB)
    ) == sorted(f"rotation/{n}" for n in [*names, shards.shard_name("test", 0, 1)])
    assert all(f"rotation/{n}".startswith(shards.shard_prefix("rotation", "train")) for n in names)
    assert shards.config_shards(tmp_path, "zooming", "train") == []

"""Shared pieces of the harness adapters: where the data is, how a row becomes a prompt, and how
one model output is scored (always through :mod:`misi_bench.builder.scoring`)."""

from __future__ import annotations

import functools
import io
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..builder.core.constants import REVISION_ENV, hub_repo_id, hub_revision
from ..builder.core.provenance import DatasetProvenance
from ..builder.core.registry import HEADLINE_EXCLUDED, TASK_BY_NAME, TASK_NAMES, TaskSpec
from ..builder.core.shards import check_folder, checked_shards, config_glob
from ..builder.scoring import (
    PAPER_AVERAGE_COLUMNS,
    PAPER_COLUMNS,
    score_prediction,
)

__all__ = [
    "REVISION_ENV",
    "TASKS",
    "TEST_SPLIT",
    "TINY_SPLIT",
    "data_location",
    "hub_checked_shards",
    "load_split",
    "score_doc",
    "split_records",
]

#: The nine task configs, in the paper's order (T1..T9), from the task registry.
TASKS: tuple[str, ...] = TASK_NAMES
#: Split that the full benchmark runs on, and the 50-per-task subset (docs/spec.md section 5).
TEST_SPLIT = "test"
TINY_SPLIT = "tiny"


def data_location() -> tuple[str, str | None]:
    """``(path, revision)``: ``misi_bench.hub_repo_id()`` (a Hub id or a local folder) and
    ``$MISI_BENCH_REVISION`` (None when unset or when the path is a local folder)."""
    path = hub_repo_id()
    if os.path.isdir(os.path.expanduser(path)):
        return os.path.abspath(os.path.expanduser(path)), None
    return path, hub_revision()


def load_split(config: str, split: str, path: str | None = None, revision: str | None = None):
    """One config/split as a ``datasets.Dataset`` (images decode to PIL)."""
    import datasets

    if path is None:
        path, default_revision = data_location()
        revision = revision or default_revision
    if os.path.isdir(os.path.expanduser(path)):  # a local build: its shards are the manifest's
        check_folder(os.path.expanduser(path))
        return datasets.load_dataset(path, config, split=split)
    files = hub_checked_shards(path, revision, split, config)
    return datasets.load_dataset("parquet", data_files={split: files}, split=split)


def hub_checked_shards(
    repo: str, revision: str | None, split: str, config: str = "all"
) -> list[str]:
    """The shard files of ``config`` (``all``: every task, in task order) and ``split`` of the Hub
    repo ``repo`` at ``revision``, fetched into the Hub cache (:func:`local_copy`) and each checked
    against that tag's ``manifest.json`` (``core.shards.checked_shards``): a tag whose manifest
    disagrees with its shards is refused in one line naming the shard, before any is read."""
    folder = _hub_split_folder(repo, revision, split)
    tasks = TASKS if config == "all" else (config,)
    return [str(p) for task in tasks for p in checked_shards(folder, task, split)]


@functools.lru_cache(maxsize=8)
def _hub_split_folder(repo: str, revision: str | None, split: str) -> Path:
    """:func:`local_copy` of one split, fetched once per process (a harness loads each task and
    then its build column: one snapshot resolution, not two per task); the shards in it are still
    checked on every read (``checked_shards`` hashes a file again when its size or mtime moves)."""
    return local_copy(repo, revision, (split,))[0]


def to_pil_rgb(image: Any):
    """A PIL RGB image from whatever a row holds (PIL image, ``{"bytes", "path"}``, bytes, path)."""
    from PIL import Image

    if isinstance(image, Mapping):
        data, path = image.get("bytes"), image.get("path")
        image = Image.open(io.BytesIO(data)) if data else Image.open(path)
    elif isinstance(image, (bytes, bytearray)):
        image = Image.open(io.BytesIO(image))
    elif isinstance(image, (str, os.PathLike)):
        image = Image.open(image)
    if image.mode != "RGB":
        image = image.convert("RGB")
    return image


def doc_images(doc: Mapping) -> list:
    """The row's images in prompt order, as PIL RGB."""
    return [to_pil_rgb(img) for img in (doc.get("images") or [])]


def doc_prompt(doc: Mapping, pre: str = "", post: str = "") -> str:
    """The row's full prompt text (it already lists the options and the answer format)."""
    return f"{pre}{doc['question']}{post}"


def options_of(doc: Mapping) -> list[str] | None:
    opts = doc.get("options")
    if opts is None:
        return None
    opts = [str(o) for o in list(opts)]
    return opts or None


#: Paper column keys of each headline task (T4: its positive and negative halves).
_TASK_COLUMNS: dict[str, tuple[str, ...]] = {}
for _key, _section, _name, _counted in PAPER_COLUMNS:
    if _counted:
        _task = _name if _section == "tasks" else _name.rsplit("_", 1)[0]
        _TASK_COLUMNS[_task] = (*_TASK_COLUMNS.get(_task, ()), _key)
#: A harness group takes the unweighted mean over its seven headline tasks; each task reports
#: its columns' sum times this factor, so that mean is the paper's eight-column average.
GROUP_SHARE = len(_TASK_COLUMNS) / len(PAPER_AVERAGE_COLUMNS)


#: The metric every headline task reports as its score, so that a harness group's mean of it is
#: ``average_headline_tasks``.
HEADLINE_METRICS: tuple[str, ...] = ("average_headline_tasks",)


def score_doc(doc: Mapping, prediction: Any) -> dict[str, Any]:
    """Score one output for one row with the one scorer and name the values for the harnesses.

    Keys: ``score`` and ``exact`` always (a group's mean of ``score`` is the average over all
    tasks). For the tasks of the paper's average (all but translation_rotation and
    rotation_rotation): ``average_headline_tasks`` (= ``score``; the group's mean is the average
    over the headline's tasks, :data:`HEADLINE_METRICS`) and ``paper_average`` (``{"column", "score"}``, aggregated by
    :func:`paper_average_share` so that the group's mean is the paper's average). For a task
    with ``halves`` (T4) also ``score_positive`` or ``score_negative`` (only the one that
    matches the row's half, so its mean is the paper's T4 positive / negative figure).
    The question is also kept for the run's intervals (:mod:`.harness_intervals`).
    """
    from .harness_intervals import collect  # noqa: PLC0415

    task = doc["task"]
    halves = TASK_BY_NAME[task].halves  # T4: "polarity" (1 positive, 0 negative)
    metrics = score_doc_raw(doc, prediction)
    collect(doc, metrics)  # for the run's intervals (harness_intervals)
    out: dict[str, Any] = {"score": float(metrics["score"]), "exact": float(metrics["exact"])}
    positive = halves is not None and metrics.get(halves, 1.0) >= 0.5
    if task not in HEADLINE_EXCLUDED:
        out.update(dict.fromkeys(HEADLINE_METRICS, out["score"]))
        columns = _TASK_COLUMNS[task]
        column = columns[0] if len(columns) == 1 else columns[0 if positive else 1]
        out["paper_average"] = {"column": column, "score": out["score"]}
    if halves is not None and halves in metrics:
        out["score_positive" if positive else "score_negative"] = out["score"]
    return out


def paper_average_share(items: Sequence[Mapping]) -> float:
    """One task's ``paper_average`` value from its rows' ``{"column", "score"}`` items: the sum
    of its column means (T4: positive + negative) times :data:`GROUP_SHARE` (7/8). On a task row
    it is only that task's share; the group row (unweighted mean over the seven tasks) is the
    paper's average. NaN when the task has no row, or no row for one of its columns."""
    by_column: dict[str, list[float]] = {}
    for item in items:
        by_column.setdefault(str(item["column"]), []).append(float(item["score"]))
    if not by_column:
        return float("nan")
    task = next(t for t, cols in _TASK_COLUMNS.items() if next(iter(by_column)) in cols)
    means = [
        math.fsum(by_column[c]) / len(by_column[c]) if by_column.get(c) else float("nan")
        for c in _TASK_COLUMNS[task]
    ]
    return GROUP_SHARE * math.fsum(means)


def score_doc_raw(doc: Mapping, prediction: Any) -> dict[str, float]:
    """The scorer's own metrics for one row (``score``, ``exact``, ``parsed``, T4 ``polarity``...),
    as :func:`misi_bench.builder.scoring.aggregate` expects them."""
    return score_prediction(
        doc["task"], prediction, doc["answer"], doc.get("metadata"), options=options_of(doc)
    )


def metric_names(task: str) -> list[str]:
    """Metric names :func:`score_doc` can produce for ``task`` (in report order)."""
    return spec_metric_names(TASK_BY_NAME[task])


def spec_metric_names(spec: TaskSpec) -> list[str]:
    """Metric names of a registry entry: ``score``, ``exact``, the averages unless the task is
    left out of them (T5, T6), and the scores of its halves (T4)."""
    names = ["score", "exact"]
    if spec.in_headline:
        names += [*HEADLINE_METRICS, "paper_average"]
    if spec.halves is not None:
        names += ["score_positive", "score_negative"]
    return names


def call_main(prog: str, argv: Sequence[str], main: Callable[[], object]) -> int:
    """Run a harness's argv-reading ``main()`` in this process with ``argv`` and return its exit
    code (``SystemExit`` included), restoring ``sys.argv`` afterwards."""
    saved = sys.argv
    sys.argv = [prog, *argv]
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = saved
    return 0


def gold_by_id(path: str | Path, splits: tuple[str, ...] = ("test", "tiny")) -> dict[str, str]:
    """``question id -> gold answer`` over every config of a local dataset folder (for the
    weight-free oracle models; question texts repeat between questions of one complex, ids do not)."""
    import pyarrow.parquet as pq

    table = {}
    for task in TASKS:
        for split in splits:
            for shard in checked_shards(path, task, split):
                t = pq.read_table(shard, columns=["id", "answer"])
                table.update(zip(t.column("id").to_pylist(), t.column("answer").to_pylist()))
    return table


def build_config_hash(location: str | None = None, revision: str | None = None) -> str | None:
    """The ``config_hash`` of a build's ``manifest.json`` (what predictions record, so that
    ``misi-bench score`` can tell builds apart whose ids agree but whose answers differ, e.g.
    ``--hbonds plip`` vs ``chimerax``): a local folder's, or the Hub repo's (one download, from
    the cache when offline); None when it cannot be read. ``location`` defaults to
    :func:`data_location`."""
    if location is None:
        location, revision = data_location()
    folder = Path(os.path.expanduser(location))
    if folder.is_dir():
        return _manifest_hash(str(folder / "manifest.json"))
    return _hub_manifest_hash(location, revision)


def _manifest_hash(path: str) -> str | None:
    import json

    try:
        value = json.loads(Path(path).read_text(encoding="utf-8")).get("config_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return str(value) if value else None


def _hub_manifest_hash(repo: str, revision: str | None) -> str | None:
    path = _hub_manifest_file(repo, revision)
    return _manifest_hash(path) if path else None


@functools.lru_cache(maxsize=8)
def _hub_manifest_file(repo: str, revision: str | None) -> str | None:
    """The local copy of the Hub repo's ``manifest.json`` at ``revision`` (one download, from
    the cache when offline); None when it cannot be read."""
    try:
        from huggingface_hub import hf_hub_download

        return hf_hub_download(repo, "manifest.json", repo_type="dataset", revision=revision)
    except Exception:  # noqa: BLE001 (no manifest, offline without a cache...: not recorded)
        return None


def dataset_provenance(
    location: str | None = None, revision: str | None = None, commit: str | None = None
) -> DatasetProvenance:
    """The provenance record (``builder.core.provenance``) of the data a result is computed on:
    a local folder (resolved path, its manifest) or a Hub repo at ``revision`` (``commit``: the
    commit it resolved to when known; else the commit of the manifest copy read). ``location``
    defaults to :func:`data_location` (``$MISI_BENCH_REPO`` / ``$MISI_BENCH_REVISION``)."""
    import json

    if location is None:
        location, revision = data_location()
    folder = Path(os.path.expanduser(location))
    path = str(folder / "manifest.json") if folder.is_dir() else None
    if path is None:
        path = _hub_manifest_file(location, commit or revision)
        cached = Path(path).parent.name if path else ""
        if not commit and len(cached) == 40 and all(c in "0123456789abcdef" for c in cached):
            commit = cached
    try:
        manifest = json.loads(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        manifest = None
    if folder.is_dir():
        return DatasetProvenance.from_manifest(str(folder.resolve()), manifest)
    return DatasetProvenance.from_manifest(location, manifest, revision, commit)


def with_build_column(dataset, location: str | None = None, revision: str | None = None):
    """``dataset`` (a ``datasets.Dataset`` of one config and split) with a ``config_hash`` column
    naming its build (:func:`build_config_hash`), so that the harnesses' sample logs (which log
    each row without its images) carry it; unchanged when the hash is unknown."""
    if location is None:
        location, revision = data_location()
    if os.path.isdir(os.path.expanduser(location)):  # lmms-eval loads a local build itself
        check_folder(os.path.expanduser(location))
    elif getattr(dataset, "split", None):  # ... and a Hub repo: that tag's shards are checked too
        hub_checked_shards(location, revision, str(dataset.split))
    build = build_config_hash(location, revision)
    if not build or "config_hash" in dataset.column_names:
        return dataset
    return dataset.add_column("config_hash", [build] * len(dataset))


def split_records(build: str | Path, split: str) -> list[dict]:
    """The scorer's columns (``core.rows.SCORE_COLUMNS``) of every question of ``split`` in a
    build folder, configs in registry order, each shard checked against the manifest's sha256
    (``core.shards.checked_shards``)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    from ..builder.core.rows import SCORE_COLUMNS  # noqa: PLC0415

    records: list[dict] = []
    for task in TASK_NAMES:
        for shard in checked_shards(build, task, split):
            records += pq.read_table(shard, columns=list(SCORE_COLUMNS)).to_pylist()
    return records


def local_copy(
    dataset: str, revision: str | None = None, splits: Sequence[str] = (TEST_SPLIT,)
) -> tuple[Path, DatasetProvenance]:
    """A build folder for ``dataset`` and its provenance record: the folder itself, or for a
    Hub repo id the repo at ``revision`` (default ``$MISI_BENCH_REVISION``, else the default
    branch) with only the shards of ``splits``, ``manifest.json`` and ``baselines.json``
    fetched into the Hub cache (``report --dataset``, ``human``). One line naming the input
    when it is neither, when ``--revision`` is given for a folder, or when the Hub cannot
    give it."""
    from ..builder.core.errors import MisiError

    folder = Path(os.path.expanduser(dataset))
    if folder.is_dir():
        if revision:
            raise MisiError(
                f"--revision {revision}: {dataset} is a local folder (it has one version); "
                "--revision picks a tag, branch or commit of a Hub repo"
            )
        return folder, dataset_provenance(str(folder))
    parts = dataset.split("/")
    if len(parts) != 2 or not all(parts) or dataset.startswith((".", "~")):
        raise MisiError(f"{dataset}: no such build folder (and not a Hub repo id like owner/name)")
    revision = revision or hub_revision()
    patterns = [config_glob("*", s) for s in splits] + [
        "manifest.json",
        "baselines.json",
        "question_baselines.npz",
    ]
    try:
        from huggingface_hub import snapshot_download

        path = Path(
            snapshot_download(
                dataset, repo_type="dataset", revision=revision, allow_patterns=patterns
            )
        )
    except Exception as exc:  # noqa: BLE001 (network, auth, unknown revision: one line)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise MisiError(
            f"{dataset}@{revision or 'main'}: cannot fetch the dataset from the Hub ({first})"
        ) from None
    commit = path.name if len(path.name) == 40 else None
    return path, dataset_provenance(dataset, revision, commit)

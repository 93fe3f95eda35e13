"""The inputs of ``misi-bench score``: the dataset (a local build folder or a Hub repo, each
checked with a one-line error), its rows and config hash, and the task configs (names or
aliases, with a did-you-mean). The predictions are read in :mod:`.score_command`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..core.errors import MisiError
from ..core.provenance import DatasetProvenance
from ..core.rows import SCORE_COLUMNS

ROW_FIELDS = list(SCORE_COLUMNS)


def check_configs(names: list[str] | None) -> list[str]:
    """Config names or aliases as config names (in the given order, once each); one line with a
    did-you-mean for an unknown name."""
    from ..core.registry import canonical_configs  # noqa: PLC0415

    try:
        return canonical_configs(names or [])
    except ValueError as exc:
        raise MisiError(f"--configs: {exc}") from None


def add_revision_argument(parser) -> None:
    """``--revision`` of ``score``: a tag (``v1.0.0``), branch or commit of a Hub ``--dataset``."""
    parser.add_argument(
        "--revision",
        help="Hub revision of --dataset: a release tag (v1.0.0), a branch or a commit (default: "
        "$MISI_BENCH_REVISION, else the default branch); the JSON report records it, with the "
        "commit it resolved to and the build's config hash",
    )


_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def check_dataset(dataset: str, revision: str | None = None) -> DatasetProvenance:
    """The provenance record of ``--dataset`` (a build folder, or a reachable or cached Hub repo
    id at ``--revision``, default ``$MISI_BENCH_REVISION``:
    :func:`..dataset.hub_probe.dataset_provenance`); one line naming the
    input otherwise: a path that does not exist, a folder that is not a build, an unreachable
    Hub, a revision the repo does not have."""
    path = Path(dataset).expanduser()
    if path.is_dir():
        if not (path / "manifest.json").is_file():
            raise MisiError(
                f"--dataset {dataset}: a folder but not a MiSI-Bench build (no manifest.json)"
            )
        return _provenance(dataset, revision)
    if path.exists():
        raise MisiError(f"--dataset {dataset}: a file, not a build folder or a Hub repo id")
    if not _HUB_ID_RE.match(dataset):
        raise MisiError(
            f"--dataset {dataset}: no such folder (a local build folder must exist; a Hub "
            "dataset is named owner/name)"
        )
    from ..core.constants import hub_revision  # noqa: PLC0415

    return _provenance(dataset, revision or hub_revision())


def _provenance(dataset: str, revision: str | None) -> DatasetProvenance:
    from ..dataset.hub_probe import dataset_provenance  # noqa: PLC0415

    return dataset_provenance(dataset, revision)


def build_hash(dataset: str) -> str | None:
    """The config hash of a local build (its ``manifest.json``); None for a Hub repo."""
    path = Path(dataset).expanduser() / "manifest.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("config_hash")
    except (OSError, ValueError):
        return None


def load_rows(
    dataset: str, configs: list[str], split: str, revision: str | None = None
) -> list[dict]:
    """Rows (id, task, answer, metadata, options) of a local build folder or a Hub repo at
    ``revision`` (pass the resolved commit, so every config is read from the same one)."""
    from ..core.registry import TASK_NAMES as TASKS  # noqa: PLC0415

    path = Path(dataset).expanduser()
    local = path.is_dir() and (path / "manifest.json").exists()
    kwargs = {"revision": revision} if revision else {}
    if not configs and not local:  # every task the repo has (a build may hold fewer)
        import datasets  # noqa: PLC0415

        held = set(datasets.get_dataset_config_names(dataset, **kwargs))
        configs = [t for t in TASKS if t in held]
    rows: list[dict] = []
    for config in configs or list(TASKS):
        if local:
            from ..core.shards import checked_shards  # noqa: PLC0415
            from ..store.parquet import iter_config_rows  # noqa: PLC0415

            checked_shards(path, config, split)  # an edited shard is never scored
            rows.extend(
                {k: r[k] for k in ROW_FIELDS}
                for r in iter_config_rows(path, config, split, ROW_FIELDS)
            )
        else:  # the Hub: its shards, checked against its manifest, read as a local folder's
            from ..dataset.hub_probe import hub_split_folder  # noqa: PLC0415
            from ..store.parquet import iter_config_rows  # noqa: PLC0415

            folder = hub_split_folder(dataset, [config], split, revision)
            rows.extend(
                {k: r[k] for k in ROW_FIELDS}
                for r in iter_config_rows(folder, config, split, ROW_FIELDS)
            )
    return rows

"""One short look at a Hub dataset repo before reading it (``score --dataset owner/name``), so
that an offline machine, a wrong name or a wrong ``--revision`` is one line after a few seconds,
not a long retry loop or a traceback; and the provenance record of the dataset a score is
computed against (:func:`dataset_provenance`: repo or path, revision, commit, config hash)."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

from ..core.errors import MisiError
from ..core.provenance import DatasetProvenance

log = logging.getLogger(__name__)

HUB_TIMEOUT_S = 10.0  # one short try before the Hub is declared unreachable
_OFFLINE = ("1", "on", "true", "yes")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for the cached copy only."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _OFFLINE


def probe_dataset_repo(
    repo_id: str, timeout_s: float = HUB_TIMEOUT_S, revision: str | None = None
) -> str | None:
    """The commit of ``repo_id`` at ``revision`` (default branch when None) when the Hub shows
    it; None when ``HF_HUB_OFFLINE`` is set (the cached copy is used) or huggingface_hub is
    missing; :class:`MisiError` with one line otherwise (naming the revision when the repo
    exists but the revision does not)."""
    if hub_offline():
        return None
    try:
        from huggingface_hub import HfApi  # noqa: PLC0415
        from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError  # noqa: PLC0415
    except ImportError:  # datasets brings huggingface_hub; without it datasets says why
        return None
    try:
        info = HfApi().dataset_info(repo_id, revision=revision, timeout=timeout_s)
    except RevisionNotFoundError:
        raise MisiError(
            f"--revision {revision}: {repo_id} has no such tag, branch or commit (its tags: "
            f"{_tag_names(repo_id, timeout_s)})"
        ) from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        raise MisiError(
            f"--dataset {repo_id}: not a dataset the Hub shows (HTTP {status or '?'}; "
            "a private repo needs `huggingface-cli login`)"
        ) from None
    except Exception as exc:  # noqa: BLE001 (any failure of the one try is one line)
        raise MisiError(
            f"--dataset {repo_id}: the Hub did not answer within {timeout_s:g} s "
            f"({type(exc).__name__}); pass a local build folder, or set HF_HUB_OFFLINE=1 to "
            "use a cached copy"
        ) from None
    return getattr(info, "sha", None)


def _tag_names(repo_id: str, timeout_s: float) -> str:
    """The repo's tags, comma-separated ('none' or 'not listed' when there are none or the
    Hub does not say)."""
    try:
        from huggingface_hub import HfApi  # noqa: PLC0415

        tags = [t.name for t in HfApi().list_repo_refs(repo_id, repo_type="dataset").tags]
    except Exception:  # noqa: BLE001 (only a hint in an error message)
        return "not listed"
    return ", ".join(sorted(tags)) or "none"


def dataset_provenance(dataset: str, revision: str | None = None) -> DatasetProvenance:
    """The provenance record of ``dataset`` (a build folder, or a Hub repo id at ``revision``).

    A local folder: its resolved path and its ``manifest.json`` (``--revision`` is refused: a
    folder has one version). A Hub repo: the revision is looked up once
    (:func:`probe_dataset_repo`), the repo's ``manifest.json`` downloaded at that commit (from
    the cache when offline), so the config hash of a Hub dataset is known as for a folder."""
    path = Path(dataset).expanduser()
    if path.is_dir():
        if revision:
            raise MisiError(
                f"--revision {revision}: --dataset {dataset} is a local folder (it has one "
                "version); --revision picks a tag, branch or commit of a Hub repo"
            )
        return DatasetProvenance.from_manifest(
            str(path.resolve()), _read_json(path / "manifest.json")
        )
    commit = probe_dataset_repo(dataset, revision=revision)
    manifest, cached_commit = _hub_manifest(dataset, commit or revision)
    return DatasetProvenance.from_manifest(dataset, manifest, revision, commit or cached_commit)


def _hub_manifest(repo_id: str, revision: str | None) -> tuple[dict | None, str | None]:
    """The repo's ``manifest.json`` at ``revision`` and the commit of the copy read (the Hub
    cache keeps files under ``snapshots/<commit>/``); (None, None) when it cannot be read."""
    try:
        from huggingface_hub import hf_hub_download  # noqa: PLC0415

        path = Path(
            hf_hub_download(repo_id, "manifest.json", repo_type="dataset", revision=revision)
        )
    except Exception as exc:  # noqa: BLE001 (no manifest, offline without a cache...)
        log.warning("%s: no manifest.json read at %s (%s)", repo_id, revision or "main", exc)
        return None, None
    commit = path.parent.name if _COMMIT_RE.match(path.parent.name) else None
    return _read_json(path), commit


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stored_baselines(dataset: str, revision: str | None = None) -> dict:
    """The build's ``baselines.json`` (T5/T6's options-only answers): a local build's, or the
    Hub repo's at ``revision`` (from the cache when offline); {} when it has none."""
    path = Path(dataset).expanduser() / "baselines.json"
    if not path.is_file() and not Path(dataset).expanduser().exists():
        try:
            from huggingface_hub import hf_hub_download  # noqa: PLC0415

            path = Path(
                hf_hub_download(dataset, "baselines.json", repo_type="dataset", revision=revision)
            )
        except Exception:  # noqa: BLE001 (no such file, offline without a cache: no stored rows)
            return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def stored_question_baselines(dataset: str, split: str, revision: str | None = None):
    """The build's per-question baselines of ``split`` (``scoring.question_baselines``): a local
    build's file, or the Hub repo's at ``revision`` (from the cache when offline), checked
    against its manifest's sha256; None when it has none (an older build) or it does not match
    (the caller computes them then)."""
    from ..scoring import question_baselines as qb  # noqa: PLC0415

    folder = Path(dataset).expanduser()
    paths = {name: folder / name for name in (qb.FILE, "manifest.json")}
    if not folder.exists():
        try:
            from huggingface_hub import hf_hub_download  # noqa: PLC0415

            paths = {
                name: Path(hf_hub_download(dataset, name, repo_type="dataset", revision=revision))
                for name in paths
            }
        except Exception:  # noqa: BLE001 (no such file, offline without a cache: computed)
            return None
    try:
        manifest = json.loads(paths["manifest.json"].read_text(encoding="utf-8"))
        entry = manifest.get(qb.MANIFEST_KEY) or {}
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        return None
    return qb.read_question_baselines(paths[qb.FILE], split, entry["sha256"])


def hub_split_folder(repo_id: str, configs: list[str], split: str, revision: str | None) -> Path:
    """The Hub cache's copy of ``configs``' ``split`` shards and ``manifest.json`` of ``repo_id``
    at ``revision`` (``snapshot_download``, only those files), each shard checked against that
    manifest's sha256 (``core.shards.checked_shards``): a tag whose manifest disagrees with its
    shards is refused in one line naming the shard. One line when the Hub cannot give it."""
    from ..core.shards import checked_shards, config_glob  # noqa: PLC0415

    patterns = [config_glob(c, split) for c in configs] + ["manifest.json"]
    try:
        from huggingface_hub import snapshot_download  # noqa: PLC0415

        folder = Path(
            snapshot_download(
                repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns
            )
        )
    except Exception as exc:  # noqa: BLE001 (network, auth, unknown revision: one line)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise MisiError(
            f"{repo_id}@{revision or 'main'}: cannot fetch the {split} shards ({first[:200]})"
        ) from None
    for config in configs:
        checked_shards(folder, config, split)
    return folder

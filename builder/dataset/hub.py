"""Publishing a built dataset folder to the Hugging Face Hub (docs/spec.md section 8).

``push_dataset`` uploads exactly the files of a dataset folder that belong in the dataset repo:
``README.md`` (the card), ``manifest.json``, the Parquet shards ``<config>/<split>-NNNNN-of-NNNNN.parquet``
and the card's ``examples/*.png``. The build's resumable work area ``.work/`` (and any other hidden
folder) is never uploaded. The dry-run listing and the upload use the same patterns and the same
matcher (``huggingface_hub.utils.filter_repo_objects``, the one the client applies), so what a dry run
lists is what a real push sends.

A release is a tag ``vMAJOR.MINOR.PATCH``. Before anything is uploaded the tag is checked against the
repo's refs: an existing tag is never moved (``MisiError``). The pushed ``manifest.json`` states the
tag (key ``version``) and the pushed card is regenerated to state it, so the files of a tagged
revision name their own version. A push without a tag records ``version: null`` (a development
push). The card's Load and Evaluate snippets name the repo and tag being pushed. A dry run
stages the release as a push would, prints the staged card's head and snippets, and warns (as
a push does) when the build is the embedded sample set or has fewer than
:data:`MIN_RELEASE_TEST_COMPLEXES` test complexes.

A push never edits the build folder: the files the Hub gets are assembled in a staging folder
outside it (links to the shards and images, a new manifest and card), so the local manifest (and
``misi-bench eval``'s run key, which hashes it) stay as built, and a failed upload leaves the folder
as it was. Before anything is sent, every shard's sha256 is compared with the manifest
(``manifest.shard_problems``) and a build whose recorded validation failed is refused. The push
holds the folder's writer lock (``lock.folder_lock``), so no build or merge rewrites it meanwhile.

The token is handed to ``huggingface_hub`` only; it is never printed, logged or written to the folder.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..core.constants import hub_repo_id
from ..core.errors import MisiError
from ..core.shards import SHARD_GLOB
from ..store.manifest import manifest_problems, read_manifest, shard_problems, write_manifest
from .card import write_card
from .lock import command_line, folder_lock
from .publish import recover
from .release_rules import (  # noqa: F401 (MIN_RELEASE_TEST_COMPLEXES: part of this module's API)
    MIN_RELEASE_TEST_COMPLEXES,
    refuse_small,
    release_warnings,
)

log = logging.getLogger(__name__)

#: Errors of a write that failed for want of room or rights (said in one line, with the path).
WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
)

REPO_TYPE = "dataset"
DEFAULT_REVISION = "main"
TAG_RE = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")

#: Files of a dataset folder that go to the Hub (fnmatch patterns on POSIX paths relative to the folder).
ALLOW_PATTERNS = [
    "README.md",
    "manifest.json",
    "baselines.json",
    "question_baselines.npz",
    SHARD_GLOB,
    "examples/*.png",
]
#: Never uploaded. fnmatch's ``*`` crosses ``/``, so ``*/*.parquet`` alone would also match the build's
#: work units under ``.work/``; these patterns take them (and every other hidden path) out again.
IGNORE_PATTERNS = [".work/*", ".cache/*", ".*", "*/.*"]
#: Above this size a client that still has ``upload_large_folder`` (huggingface_hub < 2) uses it: it is
#: resumable and commits in several parts. Newer clients make ``upload_folder`` itself resumable and
#: multi-commit (with ``hf_xet``), so ``upload_folder`` is used there whatever the size.
LARGE_FOLDER_BYTES = 2 * 1024**3


@dataclass
class PushResult:
    """What a push did (or, for a dry run, would do)."""

    repo_id: str
    revision: str
    tag: str | None
    files: list[tuple[str, int]] = field(default_factory=list)  # (path in repo, bytes)
    dry_run: bool = False
    commit_oid: str | None = None
    commit_url: str | None = None
    #: A dry run's staged card, first lines and snippets (:func:`card_head`); None for a push.
    card_head: str | None = None
    #: What a maintainer should read before publishing (:func:`release_warnings`).
    warnings: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def validate_tag(tag: str | None) -> str | None:
    """``tag`` itself if it is ``vMAJOR.MINOR.PATCH`` (or None); MisiError otherwise."""
    if tag is None:
        return None
    if not isinstance(tag, str) or not TAG_RE.fullmatch(tag):  # no trailing newline either
        raise MisiError(
            f"tag {tag!r} is not a release version of the form vMAJOR.MINOR.PATCH (e.g. v1.2.0)"
        )
    return tag


def _validate_repo_id(repo_id: str) -> str:
    parts = str(repo_id).split("/")
    if len(parts) != 2 or not all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", p) for p in parts):
        raise MisiError(f"repo id {repo_id!r} is not of the form ORG/NAME")
    return str(repo_id)


def _require_hub() -> None:
    try:
        import huggingface_hub  # noqa: F401,PLC0415
    except ImportError:
        raise MisiError("publishing needs huggingface_hub: pip install 'misi-bench[hub]'") from None


def upload_files(folder: Path) -> list[tuple[str, int]]:
    """(relative POSIX path, size) of every file of ``folder`` a push uploads, sorted by path."""
    _require_hub()
    from huggingface_hub.utils import filter_repo_objects  # noqa: PLC0415

    folder = Path(folder)
    candidates = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    chosen = list(
        filter_repo_objects(
            candidates, allow_patterns=ALLOW_PATTERNS, ignore_patterns=IGNORE_PATTERNS
        )
    )
    return [(rel, (folder / rel).stat().st_size) for rel in chosen]


def _check_folder(folder: Path) -> dict:

    if not folder.is_dir():
        raise MisiError(
            f"{folder}: not a folder (expected a dataset folder written by 'misi-bench build')"
        )
    if not (folder / "manifest.json").is_file():
        raise MisiError(
            f"{folder}: no manifest.json (expected a dataset folder written by 'misi-bench build')"
        )
    try:
        manifest = read_manifest(folder)
    except ValueError as exc:
        raise MisiError(f"{folder / 'manifest.json'}: not valid JSON ({exc})") from None
    wrong = manifest_problems(manifest)
    if wrong:
        raise MisiError(
            f"{folder / 'manifest.json'}: not a build's manifest: {'; '.join(wrong[:3])}; "
            "nothing was pushed (rebuild, or restore the manifest the build wrote)"
        )
    shards = [rel for rel, _ in upload_files(folder) if rel.endswith(".parquet")]
    if not shards:
        raise MisiError(
            f"{folder}: no Parquet shards <config>/<split>-NNNNN-of-NNNNN.parquet to push"
        )
    missing = sorted(set(manifest.get("shards", {})) - set(shards))
    if missing:
        raise MisiError(
            f"{folder}: shards listed in manifest.json are missing: {', '.join(missing[:5])}"
        )
    validation = manifest.get("validation")
    if isinstance(validation, dict) and not validation.get("ok", False):
        raise MisiError(
            f"{folder}: its validation failed ({'; '.join(validation.get('problems', [])[:2])}); "
            "a build that failed validation is never pushed: rebuild it"
        )
    if validation is None:
        log.warning("%s: the build was not validated (run 'misi-bench validate' first)", folder)
    problems = shard_problems(folder, manifest)
    if problems:
        raise MisiError(
            f"{folder}: the shards are not the ones the manifest describes: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + "; nothing was pushed"
        )
    return manifest


def stage_release(
    folder: Path, staging: Path, manifest: dict, tag: str | None, repo_id: str
) -> None:
    """Assemble in ``staging`` what the Hub gets: the folder's shards (hard links, else symbolic
    links: the data is not copied, and nothing here ever writes to them), a manifest and card
    stating ``tag`` (the card's images written anew), and copies of the other small files.
    ``folder`` itself is only read."""
    files = [rel for rel, _ in upload_files(folder)]
    for rel in files:
        if rel in manifest.get("shards", {}):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(folder / rel, target)
            except OSError:
                os.symlink((folder / rel).resolve(), target)
        elif rel in ("baselines.json", "question_baselines.npz"):
            shutil.copyfile(folder / rel, staging / rel)
    staged = {**manifest, "version": tag}
    write_manifest(staging, staged)
    write_card(staging, staged, repo_id)
    for rel in files:  # anything else the folder publishes that the card did not write anew
        if not (staging / rel).exists():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, staging / rel)


def push_dataset(
    folder: Path,
    repo_id: str | None = None,
    tag: str | None = None,
    revision: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    allow_small: bool = False,
) -> PushResult:
    """Publish the dataset folder ``folder`` to the Hub dataset repo ``repo_id``.

    ``repo_id`` defaults to ``misi_bench.hub_repo_id()`` ($MISI_BENCH_REPO or the canonical repo).
    ``revision`` is the branch to commit to (created from ``main`` when missing); ``tag`` (vX.Y.Z)
    is created on the new commit and must not exist yet. ``dry_run`` lists the files that would be
    uploaded and contacts nothing. ``token``/``endpoint`` default to huggingface_hub's own
    (``HF_TOKEN`` or the saved login, ``HF_ENDPOINT``). A tagged push of a build that
    docs/releasing.md forbids publishing (:func:`release_warnings`: the embedded sample set,
    fewer than :data:`MIN_RELEASE_TEST_COMPLEXES` test complexes) is refused before the Hub is
    contacted unless ``allow_small`` (``--allow-small``): a tag is never moved.
    """
    if repo_id is None:
        repo_id = hub_repo_id()
    repo_id = _validate_repo_id(repo_id)
    tag = validate_tag(tag)
    revision = revision or DEFAULT_REVISION
    folder = Path(folder)
    if not folder.is_dir():
        _check_folder(folder)  # the clear error for a path that is not a dataset folder
    # a dry run only reads; a push holds the writer lock (its file is outside the release)
    with contextlib.nullcontext() if dry_run else folder_lock(folder, command_line()):
        if not dry_run:
            recover(folder)  # a publish switch a killed build left half done
        manifest = _check_folder(folder)
        if tag and not dry_run and not allow_small:
            refuse_small(folder, tag, release_warnings(manifest, tag))
        return _push_checked(
            folder, manifest, repo_id, tag, revision, private, dry_run, token, endpoint
        )


def _push_checked(
    folder: Path,
    manifest: dict,
    repo_id: str,
    tag: str | None,
    revision: str,
    private: bool,
    dry_run: bool,
    token: str | None,
    endpoint: str | None,
) -> PushResult:
    """The push of a checked folder (its lock held): a dry run's listing, or the upload of a
    staging copy."""
    notes = release_warnings(manifest, tag)
    for note in [] if dry_run else notes:  # a dry run prints them after the card
        log.warning("%s: %s", folder, note)
    if dry_run:
        files = upload_files(folder)
        head = staged_card_head(folder, manifest, tag, repo_id)
        log.info(
            "dry run: %d files (%d bytes) would be pushed to %s@%s%s",
            len(files),
            sum(s for _, s in files),
            repo_id,
            revision,
            f" and tagged {tag}" if tag else "",
        )
        return PushResult(
            repo_id, revision, tag, files, dry_run=True, card_head=head, warnings=notes
        )

    from huggingface_hub import HfApi  # noqa: PLC0415
    from huggingface_hub.errors import HfHubHTTPError  # noqa: PLC0415

    api = HfApi(endpoint=endpoint, token=token)
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
        if tag is not None:
            existing = {t.name: t.target_commit for t in refs.tags}
            if tag in existing:
                raise MisiError(
                    f"{repo_id}: tag {tag} already exists (at commit {existing[tag][:12]}); "
                    "a published version is never moved: push a new version tag"
                )
        if revision not in {b.name for b in refs.branches}:
            log.info("creating branch %s of %s", revision, repo_id)
            api.create_branch(repo_id, branch=revision, repo_type=REPO_TYPE, exist_ok=True)

        files, commit_oid, commit_url = _staged_upload(
            api, folder, manifest, repo_id, tag, revision, private
        )
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise MisiError(
            f"{repo_id}: the Hub refused the push (HTTP {status}): {_first_line(exc)}"
        ) from None
    except MisiError:
        raise
    except Exception as exc:  # noqa: BLE001 (unreachable, DNS, TLS, proxy: one line)
        where = endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        raise MisiError(
            f"{repo_id}: cannot reach the Hub at {where} ({type(exc).__name__}: "
            f"{_first_line(exc)[:200]}); check the network or HF_ENDPOINT, then push again "
            "(nothing was tagged)"
        ) from None
    return PushResult(
        repo_id,
        revision,
        tag,
        files,
        dry_run=False,
        commit_oid=commit_oid,
        commit_url=commit_url,
        warnings=notes,
    )


def _staged_upload(api, folder: Path, manifest: dict, repo_id, tag, revision, private) -> tuple:
    """Stage the release in a temporary folder and upload it. A write that fails there (a full
    disk, a read-only temporary folder) is one line naming the file and the folder to free."""
    tmp_root = Path(tempfile.gettempdir())
    try:
        with tempfile.TemporaryDirectory(prefix="misi-push-") as tmp:
            stage_release(folder, Path(tmp), manifest, tag, repo_id)
            return _upload(api, Path(tmp), repo_id, tag, revision, private, manifest)
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:  # e.g. a dropped connection (requests' are OSErrors)
            raise
        where = exc.filename or tmp_root
        raise MisiError(
            f"{where}: cannot write ({exc.strerror or type(exc).__name__}) while staging the "
            f"release for upload in {tmp_root}; nothing was pushed and {folder} is unchanged "
            "(free space there, or point TMPDIR at a folder with room)"
        ) from None


def _upload(api, folder: Path, repo_id, tag, revision, private, manifest) -> tuple:
    """Upload the staged ``folder`` and tag the commit: (files, commit oid, commit url)."""
    from huggingface_hub.errors import HfHubHTTPError  # noqa: PLC0415

    files = upload_files(folder)
    total = sum(s for _, s in files)
    message = (
        f"MiSI-Bench {tag or 'development build'} (builder {manifest.get('builder_version')}, "
        f"config {manifest.get('config_hash')})"
    )
    log.info("pushing %d files (%d bytes) to %s@%s", len(files), total, repo_id, revision)
    commit_oid = commit_url = None
    large_uploader = (
        getattr(api, "upload_large_folder", None) if total > LARGE_FOLDER_BYTES else None
    )
    if large_uploader is not None:
        large_uploader(
            repo_id=repo_id,
            folder_path=folder,
            repo_type=REPO_TYPE,
            revision=revision,
            private=private,
            allow_patterns=ALLOW_PATTERNS,
            ignore_patterns=IGNORE_PATTERNS,
        )
    else:
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=folder,
            repo_type=REPO_TYPE,
            revision=revision,
            commit_message=message,
            allow_patterns=list(ALLOW_PATTERNS),
            ignore_patterns=list(IGNORE_PATTERNS),
        )
        commit_oid, commit_url = getattr(info, "oid", None), getattr(info, "commit_url", None)
    if tag is not None:
        try:
            api.create_tag(
                repo_id,
                tag=tag,
                revision=commit_oid or revision,
                repo_type=REPO_TYPE,
                tag_message=message,
            )
        except HfHubHTTPError as exc:
            if exc.response is not None and exc.response.status_code == 409:
                raise MisiError(
                    f"{repo_id}: tag {tag} was created by someone else during the upload; "
                    "the files are on the branch but not tagged"
                ) from None
            raise
        log.info("tagged %s of %s as %s", (commit_oid or revision)[:12], repo_id, tag)
    return files, commit_oid, commit_url


#: Lines of the staged card a dry run prints before its snippets.
CARD_HEAD_LINES = 14


def card_head(text: str, lines: int = CARD_HEAD_LINES) -> str:
    """A card's first ``lines`` lines after its YAML header, then every snippet line that names
    the data (``load_dataset``, ``misi-bench``), so a dry run shows the repo and tag they read."""
    body = text.split("---\n", 2)[-1].strip("\n").splitlines()
    snippets = [
        line
        for line in body[lines:]
        if "load_dataset(" in line
        or line.lstrip().split(" ")[0:1] == ["misi-bench"]
        or "misi-bench lmms-eval" in line
    ]
    return "\n".join([*body[:lines], "[...]", *snippets])


def staged_card_head(folder: Path, manifest: dict, tag: str | None, repo_id: str) -> str:
    """The head of the card a push of ``folder`` would send (:func:`card_head`), staged and
    rendered as the push does (:func:`stage_release`) in a folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="misi-dry-run-") as tmp:
        stage_release(folder, Path(tmp), manifest, tag, repo_id)
        return card_head((Path(tmp) / "README.md").read_text(encoding="utf-8"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cli_push(args) -> int:
    """``misi-bench push DIR --repo ORG/NAME [--tag vX.Y.Z] [--revision BRANCH] [--private] [--dry-run]``.

    ``args`` is an argparse namespace with fields folder, repo, tag, revision, private, dry_run.
    The token comes from huggingface_hub (``HF_TOKEN`` or ``hf auth login``), never from the command line.
    """
    result = push_dataset(
        Path(args.folder),
        repo_id=getattr(args, "repo", None),
        tag=getattr(args, "tag", None),
        revision=getattr(args, "revision", None),
        private=bool(getattr(args, "private", False)),
        dry_run=bool(getattr(args, "dry_run", False)),
        allow_small=bool(getattr(args, "allow_small", False)),
    )
    target = f"{result.repo_id}@{result.revision}" + (f" (tag {result.tag})" if result.tag else "")
    if result.dry_run:
        for rel, size in result.files:
            print(f"{size:>12,d}  {rel}")
        print(
            f"\nThe card as it would be pushed (README.md, head and snippets):\n{result.card_head}\n"
        )
        for note in result.warnings:
            print(f"WARNING: {note}")
        print(
            f"dry run: {len(result.files)} files, {result.total_bytes:,d} bytes would be pushed to {target}; "
            "nothing was sent"
        )
    else:
        print(
            f"pushed {len(result.files)} files, {result.total_bytes:,d} bytes to {target}"
            + (f": {result.commit_url}" if result.commit_url else "")
        )
    return 0

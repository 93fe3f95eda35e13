"""The run folder of ``misi-bench eval``: settings, run key and the append-only answer log.

Layout of ``RUN_DIR``:

* ``run.json``: the settings that change an answer and the run key derived from them;
* ``predictions.jsonl``: one JSON object per answered question, appended as it arrives (``id``,
  ``task``, ``prediction`` = the reply text, ``raw`` = the endpoint's response object, ``usage``,
  ``latency_s``, ``attempts``); readable as is by ``misi-bench score --predictions``;
* ``failures.jsonl``: one object per question given up in a session (``id``, ``error``,
  ``attempts``); a rerun asks these questions again;
* ``report.json`` / ``report.md``: the last report.

Each line goes to the file with one ``write`` system call as soon as its answer arrives, so a
``kill -9`` of the process loses at most the requests still in flight; the file is ``fsync``-ed
at most once per :data:`FSYNC_INTERVAL_S` and when the run ends (a machine crash loses at most
that last second). A torn last line (from a crash mid-write) is cut off on reopen. A write that
fails (a full disk, a read-only folder) is one :class:`RunFolderError` naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...builder.core.errors import MisiError

log = logging.getLogger(__name__)

#: Version of the request format (message layout); part of the run key.
PROMPT_VERSION = "1"
#: Seconds between two ``fsync`` calls of the answer log.
FSYNC_INTERVAL_S = 1.0
PREDICTIONS = "predictions.jsonl"
FAILURES = "failures.jsonl"


class RunFolderError(MisiError):
    """The run folder cannot be written (a full disk, a read-only folder): one line naming the
    file, what the system said and what is saved."""


def write_error(path: Path, exc: OSError, saved: int | None = None) -> RunFolderError:
    """The one-line error for an ``OSError`` writing ``path``."""
    what = exc.strerror or type(exc).__name__
    kept = (
        f"; the {saved} answers received before are saved, and a rerun after freeing space resumes"
        if saved is not None
        else ""
    )
    return RunFolderError(f"{path}: cannot write ({what}){kept}")


@dataclass(frozen=True)
class RunSettings:
    """Everything that can change an answer; the run key is a hash of these fields.

    ``dataset`` names the data (a resolved local path or a Hub repo id) and ``revision`` its
    version (a Hub commit or tag, or the fingerprint of a local build's ``manifest.json``).
    Which questions are asked (configs, split) is not part of the key: a run folder collects
    answers per question id, so a ``tiny`` run's answers are reused by the ``test`` run.
    Neither are the endpoint URL (the same model served from a restarted server or another node
    resumes the run), concurrency, timeouts and retries.
    """

    model: str
    dataset: str
    revision: str
    max_tokens: int | None = None
    temperature: float | None = None
    system: str | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    prompt_version: str = PROMPT_VERSION

    def to_json(self) -> dict:
        """The settings as stored in run.json and report.json (and hashed into the run key):
        the secrets of ``extra_body`` replaced (:func:`.redact.redact_body`), so a rotated
        token neither shows nor changes the run key."""
        from .redact import redact_body  # noqa: PLC0415

        return {**asdict(self), "extra_body": redact_body(dict(self.extra_body))}

    def key(self) -> str:
        """16 hex digits of the SHA-256 of the canonical JSON of the settings."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_run_dir(settings: RunSettings, root: str | Path = "misi-runs") -> Path:
    """``<root>/<model>-<key>`` (the model name reduced to file-safe characters)."""
    safe = (
        "".join(c if c.isalnum() or c in "-_." else "_" for c in settings.model).strip("._")
        or "model"
    )
    return Path(root) / f"{safe[:60]}-{settings.key()}"


def iter_jsonl(path: Path) -> Iterator[dict]:
    """The JSON objects of a JSONL file; unreadable lines are logged and skipped."""
    if not path.exists():
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except (ValueError, RecursionError):
                log.warning("%s line %d: not JSON, skipped", path, n)
                continue
            if isinstance(item, dict) and "id" in item:
                yield item


def _cut_torn_tail(path: Path) -> None:
    """Truncate ``path`` after its last newline (a line torn by a crash mid-write)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        cut, pos = 0, size
        while pos > 0 and not cut:
            start = max(0, pos - (1 << 16))
            fh.seek(start)
            i = fh.read(pos - start).rfind(b"\n")
            cut, pos = (start + i + 1 if i >= 0 else 0), start
        log.warning(
            "%s: cut a torn last line (%d bytes) left by an interrupted run", path, size - cut
        )
        fh.truncate(cut)


class RunStore:
    """The run folder, opened for appending; one writer at a time (an advisory lock).

    Use as a context manager. :attr:`answers` maps id -> the last answer object on disk.
    """

    def __init__(self, run_dir: str | Path, settings: RunSettings):
        self.dir = Path(run_dir)
        self.settings = settings
        self.answers: dict[str, dict] = {}
        self._fds: dict[str, int] = {}
        self._lock_fd: int | None = None
        self._last_sync = 0.0

    # -- opening ---------------------------------------------------------------------------
    def __enter__(self) -> RunStore:
        where = self.dir
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            where = self.dir / ".lock"
            self._lock()
            where = self.dir / "run.json"
            self._check_settings()
            for name in (PREDICTIONS, FAILURES):
                where = self.dir / name
                _cut_torn_tail(where)
                self._fds[name] = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            self.close()
            raise write_error(where, exc) from None
        self.answers = {str(item["id"]): item for item in iter_jsonl(self.dir / PREDICTIONS)}
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _lock(self) -> None:
        self._lock_fd = os.open(self.dir / ".lock", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            import fcntl  # noqa: PLC0415  (POSIX only; elsewhere the lock is skipped)
        except ImportError:
            return
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise MisiError(
                f"{self.dir}: another `misi-bench eval` is writing to this run folder"
            ) from None

    def _check_settings(self) -> None:
        path = self.dir / "run.json"
        mine = {"run_key": self.settings.key(), "settings": self.settings.to_json()}
        if path.exists():
            try:
                theirs = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                raise MisiError(
                    f"{path}: unreadable run settings; move the folder away or pick another --out"
                ) from None
            if theirs.get("run_key") != mine["run_key"]:
                old = theirs.get("settings", {})
                diff = sorted(
                    k
                    for k in set(old) | set(mine["settings"])
                    if old.get(k) != mine["settings"].get(k)
                )
                raise MisiError(
                    f"{self.dir}: holds answers of other settings (run key {theirs.get('run_key')}, "
                    f"differs in {', '.join(diff) or 'key'}); use another --out"
                )
            return
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(mine, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    # -- writing ---------------------------------------------------------------------------
    def _append(self, name: str, item: Mapping) -> None:
        line = (json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        fd = self._fds[name]
        written = 0
        try:
            while written < len(line):  # a short write (signals, full disks) finishes the line
                written += os.write(fd, line[written:])
        except OSError as exc:
            if written:  # no torn line is left behind: the part written is taken back
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, os.fstat(fd).st_size - written)
            raise write_error(self.dir / name, exc, len(self.answers)) from None
        now = time.monotonic()
        if now - self._last_sync >= FSYNC_INTERVAL_S:
            self.sync()
            self._last_sync = now

    def add_answer(self, item: Mapping) -> None:
        """Append one answer object (must hold ``id`` and ``prediction``)."""
        self._append(PREDICTIONS, item)
        self.answers[str(item["id"])] = dict(item)

    def add_failure(self, item: Mapping) -> None:
        """Append one given-up question (``id``, ``error``, ``attempts``)."""
        self._append(FAILURES, item)

    def sync(self) -> None:
        for name, fd in self._fds.items():
            try:
                os.fsync(fd)
            except OSError as exc:
                raise write_error(self.dir / name, exc, len(self.answers)) from None

    def write_text(self, name: str, text: str) -> Path:
        """Write a whole file of the run folder atomically (for reports)."""
        path = self.dir / name
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise write_error(path, exc, len(self.answers)) from None
        return path

    def close(self) -> None:
        try:
            if self._fds:
                self.sync()
        finally:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()
            self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

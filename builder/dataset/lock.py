"""One writer per dataset folder: the lock that build, merge and push hold on ``<out>/.misi-lock``.

The lock is an advisory ``flock`` on the file (POSIX): the kernel drops it when its holder dies, so
a lock left by a killed process (dead pid) is free again and the next writer simply takes it. The
file records the holder (pid, host, command, start time) so that a second writer's error names
it in one line. Where ``fcntl`` is missing (Windows) the file itself is the lock (created with
``O_EXCL``); a lock whose pid is dead on this host is taken over.

The lock is re-entrant within a process (``build`` holds it across its merge); pool workers
forked while it is held share the holder's open file, so a holder's surviving workers keep it
held until they end (``workers.process_pool`` ends them within a second of the holder's death).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import MisiError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

log = logging.getLogger(__name__)

LOCK_NAME = ".misi-lock"
_HELD: dict[str, list] = {}  # resolved folder -> [fd or None, depth]


def holder_line(folder: Path, info: dict) -> str:
    """The one-line error a second writer gets."""
    return (
        f"{folder}: in use by another writer (pid {info.get('pid', '?')} on "
        f"{info.get('host', '?')}, command {info.get('command', '?')!r}, started "
        f"{info.get('started', '?')}); wait for it to finish, or use another folder"
    )


def _read_info(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _my_info(command: str) -> dict:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _pid_dead(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, TypeError):
        return False
    return False


def _acquire_flock(path: Path, command: str) -> int | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        if not path.exists():  # a read-only folder nobody can write to: nothing to guard
            log.warning("%s: cannot create the lock file (%s); going on unlocked", path, exc)
            return None
        fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise MisiError(holder_line(path.parent, _read_info(path))) from None
        raise
    with contextlib.suppress(OSError):  # the holder's record; a stale one is overwritten
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_my_info(command), sort_keys=True).encode() + b"\n", 0)
    return fd


def _acquire_file(path: Path, command: str) -> None:  # pragma: no cover - no fcntl
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            info = _read_info(path)
            if info.get("host") == socket.gethostname() and _pid_dead(info.get("pid")):
                log.info("%s: taking over the lock of dead pid %s", path, info.get("pid"))
                path.unlink(missing_ok=True)
                continue
            raise MisiError(holder_line(path.parent, info)) from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(_my_info(command), sort_keys=True) + "\n")
        return
    raise MisiError(holder_line(path.parent, _read_info(path)))


@contextlib.contextmanager
def folder_lock(folder: str | Path, command: str) -> Iterator[None]:
    """Hold the writer lock of ``folder`` (created if missing) for the ``with`` block; MisiError
    naming the holder when another process holds it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    path = folder / LOCK_NAME
    fd = _acquire_flock(path, command) if fcntl is not None else _acquire_file(path, command)
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        if fcntl is not None:
            if fd is not None:
                os.close(fd)  # releases the flock; the file stays (removing it would race)
        else:  # pragma: no cover
            Path(path).unlink(missing_ok=True)


def command_line() -> str:
    """This process's command line, for the lock's record."""
    return " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200] if sys.argv else "python"

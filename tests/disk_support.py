"""Real full and read-only file systems for the tests of issue 39's unclear errors.

``full_folder`` gives a folder on a real file system that fills after a few KB: a 64 KiB tmpfs
mounted for the test and filled up to ``room`` bytes when this process may mount (root), else
an ordinary folder plus a file-size limit (``RLIMIT_FSIZE``, ``EFBIG`` instead of ``ENOSPC``:
the kernel refuses the write the same way). ``read_only_folder`` remounts a copy read-only (a
bind mount) as root, else removes the write bits (which stops a non-root writer).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path


def _run(*args: str) -> bool:
    return subprocess.run(args, capture_output=True, check=False).returncode == 0


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def full_folder(base: Path, room: int = 12 * 1024) -> Iterator[tuple[Path, int | None]]:
    """(folder, file-size limit): the folder's file system has ``room`` bytes left (a real
    tmpfs; limit None), or the folder is ordinary and writes beyond the limit fail."""
    mount = Path(base) / "small-fs"
    mount.mkdir(parents=True)
    if can_mount() and _run(
        "mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(mount)
    ):
        try:
            filler = mount / "filler"
            with open(filler, "wb", buffering=0) as fh:
                with contextlib.suppress(OSError):
                    while True:
                        fh.write(b"\0" * 4096)
            size = filler.stat().st_size
            os.truncate(filler, max(0, size - room))
            folder = mount / "data"
            folder.mkdir()
            yield folder, None
        finally:
            _run("umount", "-l", str(mount))
        return
    yield mount, room


def limit_file_size(limit: int | None):
    """A ``preexec_fn`` (or a direct call) that makes writes past ``limit`` bytes fail with
    EFBIG instead of killing the process with SIGXFSZ; nothing for None."""

    def apply() -> None:
        if limit is None:
            return
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return apply


@contextlib.contextmanager
def file_size_limit(limit: int | None) -> Iterator[None]:
    """``limit_file_size`` for this process, undone at the end (for in-process calls)."""
    if limit is None:
        yield
        return
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, old_handler)


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """``folder`` made read-only for the block: a read-only bind mount over it (root), else
    its write bits removed (a non-root process then cannot write it)."""
    folder = Path(folder)
    if can_mount() and _run("mount", "--bind", str(folder), str(folder)):
        try:
            if not _run("mount", "-o", "remount,ro,bind", str(folder)):
                raise RuntimeError(f"cannot remount {folder} read-only")
            yield folder
        finally:
            _run("umount", "-l", str(folder))
        return
    modes = {}
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            modes[path] = path.stat().st_mode
            path.chmod(stat.S_IMODE(modes[path]) & ~0o222)
    try:
        yield folder
    finally:
        for path, mode in modes.items():
            path.chmod(stat.S_IMODE(mode))

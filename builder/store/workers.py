"""Worker processes that die with their parent: where the job runner (``runner.JobRunner``, which
runs the jobs of every stage: build, merge, validate, audit) gets its processes from.

A ``ProcessPoolExecutor`` worker whose parent is killed with ``kill -9`` would otherwise live on
(holding its memory) until it next looks at its call queue. :func:`process_pool` starts every
worker with :func:`watch_parent`, which arms two independent guards:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through ``ctypes``): the kernel kills the worker
  the moment the process that forked it exits;
* everywhere, a daemon thread that polls the parent every :data:`POLL_SECONDS` and ends the worker
  with ``os._exit`` once the parent is gone (its parent pid changed: it was re-parented, or the
  parent's pid no longer names a live, non-zombie process).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

#: How often a worker's watcher thread checks that its parent is alive (seconds).
POLL_SECONDS = 0.5
#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``.
_PR_SET_PDEATHSIG = 1


def _set_pdeathsig() -> bool:
    """Ask the Linux kernel to SIGKILL this process when its parent exits (False elsewhere)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def parent_alive(parent: int, first_ppid: int) -> bool:
    """Is ``parent`` (the pool's owner) still running, as seen from this worker whose parent pid was
    ``first_ppid`` at start? A changed parent pid means the parent exited (re-parenting); a pid
    that no longer exists or is a zombie means the owner is gone."""
    if os.getppid() != first_ppid:
        return False
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{parent}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True  # no /proc (not Linux): the pid exists


def _watch(parent: int, first_ppid: int, interval: float) -> None:
    while parent_alive(parent, first_ppid):
        time.sleep(interval)
    os._exit(1)  # noqa: SLF001 - the owner is gone: end now, no cleanup that could block


def watch_parent(parent: int, interval: float = POLL_SECONDS, pdeathsig: bool = True) -> None:
    """Arm both guards in this (worker) process for the owner process ``parent`` (``pdeathsig``:
    also the kernel's, which fires when the forking *thread* exits: only for pools owned by the
    main thread)."""
    if pdeathsig:
        _set_pdeathsig()
    first_ppid = os.getppid()
    if not parent_alive(parent, first_ppid):
        os._exit(1)
    threading.Thread(
        target=_watch, args=(parent, first_ppid, interval), name="parent-watch", daemon=True
    ).start()


def _init_worker(
    parent: int, pdeathsig: bool, initializer: Callable | None, initargs: tuple
) -> None:
    watch_parent(parent, pdeathsig=pdeathsig)
    if initializer is not None:
        initializer(*initargs)


def process_pool(
    workers: int, initializer: Callable | None = None, initargs: tuple = ()
) -> ProcessPoolExecutor:
    """A process pool of ``workers`` processes that end within about :data:`POLL_SECONDS` of this
    process's death (``initializer(*initargs)`` runs in each after the watch is armed)."""
    return ProcessPoolExecutor(
        max_workers=int(workers),
        initializer=_init_worker,
        initargs=(
            os.getpid(),
            threading.current_thread() is threading.main_thread(),
            initializer,
            tuple(initargs),
        ),
    )

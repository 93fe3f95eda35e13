"""Progress bars of a build's later stages (merge, baselines, card, validation, audit).

``build_dataset`` turns them on for its run with :func:`shown`; library calls (tests, the merge
of a Slurm job without a terminal) stay quiet. Bars are drawn by the main process only, so
they never change what a stage computes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from contextlib import contextmanager
from contextvars import ContextVar

from tqdm.auto import tqdm

log = logging.getLogger(__name__)

_SHOWN: ContextVar[bool] = ContextVar("misi_bench_progress", default=False)


@contextmanager
def shown(enabled: bool = True):
    """Show the stage bars inside this block when ``enabled``."""
    token = _SHOWN.set(bool(enabled))
    try:
        yield
    finally:
        _SHOWN.reset(token)


def enabled() -> bool:
    return _SHOWN.get()


def bar(items: Iterable, desc: str | None, total: int | None = None, unit: str = "job"):
    """``items`` wrapped in a tqdm bar named ``desc`` when bars are shown (else ``items``)."""
    if desc is None or not _SHOWN.get():
        return items
    return tqdm(items, desc=desc, total=total, unit=unit, leave=False)


def stage(text: str) -> None:
    """Log the start of a stage (INFO) so a long step without a bar still says what it does."""
    log.info("%s", text)

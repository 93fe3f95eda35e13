"""Progress bars of the builder's stages (units, merge, baselines, card, validation, audit).

Every stage counts its work on the job runner's :func:`meter` (``runner.JobRunner.map``).
``build_dataset`` turns the bars on for its run with :func:`shown` (``misi-bench audit`` for
its own); library calls (tests, the merge of a Slurm job without a terminal) stay quiet. Bars
are drawn by the main process only, so they never change what a stage computes.
"""

from __future__ import annotations

import logging
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


def stage(text: str) -> None:
    """Log the start of a stage (INFO) so a long step without a bar still says what it does."""
    log.info("%s", text)


class _Silent:
    """The counter of a stage whose bar is not shown."""

    def update(self, n: int = 1) -> None:
        pass


@contextmanager
def meter(desc: str | None, total: int | None = None, unit: str = "job"):
    """A counter of a stage's finished work (``update(n)``): a tqdm bar named ``desc`` when bars
    are shown (and ``desc`` is given), else a silent one. The bar is closed on leaving."""
    if desc is None or total == 0 or not _SHOWN.get():
        yield _Silent()
        return
    counter = tqdm(desc=desc, total=total, unit=unit, leave=False)
    try:
        yield counter
    finally:
        counter.close()

"""The one job runner of the builder's stages (build, merge, validate, audit).

A stage hands :class:`JobRunner` a job function and its jobs; the runner runs them in this process
(one worker, or a single job) or in worker processes from :func:`workers.process_pool` (which die
with this process), and gives the results back **in job order**, so what a stage computes never
depends on the worker count. The runner is the one place for:

* the worker initialiser: a :class:`Setup` is made once in each worker process (and once in this
  process for an in-process run); a runner with a setup calls ``fn(state, job)``, one without
  ``fn(job)``;
* progress: each :meth:`JobRunner.map` counts its jobs (or what ``size`` says each result holds) on
  one bar (``progress.meter``), drawn when the stage bars are shown;
* errors: a job that raises is logged once as an ERROR naming the stage and the job, and its
  exception propagates with a note naming them (its type is kept, so a caller's ``except
  OSError`` still works); a worker process that ends abruptly (killed, out of memory) raises
  :class:`WorkerDied`, naming the jobs it may have been running;
* shutdown: leaving the runner, normally or by an error, cancels the jobs not yet started, waits for
  those running and ends the workers; the state of an in-process run is closed (its ``close()``).

At most ``window`` jobs (default ``2 * workers``) are in flight, so a lazy job iterable is consumed
as the workers free up and memory stays bounded whatever the number of jobs.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import MisiError
from .progress import meter
from .workers import process_pool

log = logging.getLogger(__name__)


class WorkerDied(MisiError):
    """A worker process ended without returning its job (killed by a signal, out of memory)."""


@dataclass(frozen=True)
class Setup:
    """What each worker makes once before its first job: ``make(*args)`` (module-level and
    picklable, like ``args``). The result is the ``state`` every job function receives."""

    make: Callable[..., Any]
    args: tuple = field(default=())

    def __call__(self) -> Any:
        return self.make(*self.args)


def describe(job: Any, limit: int = 80) -> str:
    """A job's name in messages: its ``str``, cut to ``limit`` characters."""
    text = str(job)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# the state a worker process made with its Setup (one runner's pool per process)
_WORKER: dict = {}


def _init_worker(setup: Setup) -> None:
    _WORKER["state"] = setup()


def _job(fn: Callable, job: Any, with_state: bool) -> Any:
    """One job in a worker process."""
    return fn(_WORKER["state"], job) if with_state else fn(job)


_NO_STATE = object()


class JobRunner:
    """Runs a stage's jobs on ``workers`` processes (1: in this process); use it as a context
    manager (``with JobRunner(...) as runner:``) so that its workers end with the block. One runner
    may run several :meth:`map` calls (the merge's index, shard, baseline and card jobs share its
    workers)."""

    def __init__(self, workers: int = 1, setup: Setup | None = None, window: int | None = None):
        self.workers = max(1, int(workers))
        self.setup = setup
        self.window = max(1, int(window or 2 * self.workers))
        #: units counted per ``map`` description (what its bar showed), for reports and tests
        self.counted: dict[str, int] = {}
        self._pool = None
        self._state: Any = _NO_STATE

    def __enter__(self) -> JobRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """The one shutdown path: jobs not started are cancelled, running ones awaited, the
        workers ended; an in-process state's ``close()`` is called."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        state, self._state = self._state, _NO_STATE
        close = getattr(state, "close", None)
        if state is not _NO_STATE and callable(close):
            close()

    def run(self, fn: Callable, jobs: Iterable, desc: str | None = None, **kwargs) -> list:
        """:meth:`map` collected into a list."""
        return list(self.map(fn, jobs, desc, **kwargs))

    def map(
        self,
        fn: Callable,
        jobs: Iterable,
        desc: str | None = None,
        total: int | None = None,
        unit: str = "job",
        size: Callable[[Any], int] | None = None,
        label: Callable[[Any], str] = describe,
    ) -> Iterator:
        """``fn`` over ``jobs``, results in job order. ``desc``: the stage's name (bar and
        messages); ``total``: the bar's end (default: the number of jobs when ``jobs`` has a
        length); ``size(result)``: the units a result counts for (default 1); ``label(job)``: the
        job's name in error messages."""
        if total is None and hasattr(jobs, "__len__"):
            total = len(jobs)
        name = desc or "jobs"
        jobs = iter(jobs)
        head = list(itertools.islice(jobs, 2))
        jobs = itertools.chain(head, jobs)
        results = (
            self._in_pool(fn, jobs, name, label)
            if self.workers > 1 and len(head) > 1
            else self._in_process(fn, jobs, name, label)
        )
        self.counted[name] = 0
        with meter(desc, total, unit) as bar:
            for result in results:
                n = 1 if size is None else int(size(result))
                self.counted[name] += n
                bar.update(n)
                yield result

    def _in_process(self, fn: Callable, jobs: Iterator, name: str, label) -> Iterator:
        if self.setup is not None and self._state is _NO_STATE:
            self._state = self.setup()
        for job in jobs:
            try:
                result = fn(job) if self.setup is None else fn(self._state, job)
            except Exception as exc:
                _name(exc, name, label(job))
                raise
            yield result

    def _in_pool(self, fn: Callable, jobs: Iterator, name: str, label) -> Iterator:
        if self._pool is None:
            init = {} if self.setup is None else {"initializer": _init_worker}
            self._pool = process_pool(
                self.workers, initargs=(self.setup,) if self.setup else (), **init
            )
        pending: deque = deque()  # (job, future) in job order, not yet given back
        try:
            yield from self._pool_loop(fn, jobs, name, label, pending)
        except BrokenProcessPool as exc:
            unfinished = [j for j, f in pending if not _succeeded(f)]
            raise self._died(name, unfinished, label) from exc
        finally:
            for _, future in pending:
                future.cancel()

    def _pool_loop(self, fn: Callable, jobs: Iterator, name: str, label, pending: deque):
        """Keep ``window`` jobs in flight; give the results back in job order."""
        with_state = self.setup is not None
        while True:
            while sum(not f.done() for _, f in pending) < self.window:
                job = next(jobs, _NO_STATE)
                if job is _NO_STATE:
                    break
                pending.append((job, self._pool.submit(_job, fn, job, with_state)))
            if not pending:
                return
            job, future = pending[0]
            if not future.done():
                wait([f for _, f in pending if not f.done()], return_when=FIRST_COMPLETED)
                continue
            try:
                result = future.result()
            except BrokenProcessPool:
                raise
            except Exception as exc:
                _name(exc, name, label(job))
                raise
            pending.popleft()
            yield result

    def _died(self, name: str, unfinished: list, label) -> WorkerDied:
        """The error of a broken pool: the jobs that were in the workers' queue are the first
        ``workers + 1`` unfinished ones (the pool hands jobs out in submission order)."""
        suspects = ", ".join(label(j) for j in unfinished[: self.workers + 1])
        pool, self._pool = self._pool, None  # a broken pool runs no more jobs
        pool.shutdown(wait=True, cancel_futures=True)
        message = (
            f"{name}: a worker process ended abruptly (killed, or out of memory) while running "
            f"one of: {suspects}; the other workers were stopped"
        )
        log.error("%s", message)
        return WorkerDied(message)


def _succeeded(future) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


def _name(exc: Exception, name: str, job: str) -> None:
    """Log a failed job once as an ERROR naming the stage and the job, and add that as a note
    to its exception (shown under its traceback)."""
    log.error("%s: job %s failed: %s: %s", name, job, type(exc).__name__, exc)
    exc.add_note(f"in job {job} of {name}")


def run_jobs(runner: JobRunner | None, fn: Callable, jobs: Iterable, desc: str | None = None, **kw):
    """``fn`` over ``jobs`` (a list, in job order) on ``runner``, or in this process when None."""
    if runner is not None:
        return runner.run(fn, jobs, desc, **kw)
    with JobRunner(1) as alone:
        return alone.run(fn, jobs, desc, **kw)

"""Benchmark of ``misi-bench eval``'s client against the local PROTOCOL DOUBLE (not a model).

Runs the real path (request building, async HTTP over 127.0.0.1, retries, the append-only run
folder) against ``testing_server`` started in a separate process, so the CPU time measured here
is the client's alone. Prints questions/s at each concurrency with a fixed server delay against
the ideal ``concurrency / delay``, and the client CPU time per request (ms) with the number of
requests/s that one core could drive at that cost.

    python -m scripts.bench_api [--delay 0.2] [--concurrency 1 8 64]
        [--seconds 4] [--dataset BUILD_DIR]

Without ``--dataset`` the questions are text only (the client's own overhead); with a build
folder its test questions (real images) are cycled, each pass over them one run: read from the
shards by the run's own reader (its CPU counts) into the run's image cache
(``data.ImageCache``: each distinct image base64-encoded once per run). The zero-delay CPU run
is repeated without the cache (each request encodes its images again, same encoder) and with
text-only questions, so that the ratios to the text-only figure are measured in the same run;
``--built`` adds a run that sends the image requests' bodies built beforehand (what sending them
costs the client, without reading or encoding).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from unittest import mock

from misi_bench.builder.core.registry import TASK_SPECS
from misi_bench.builder.scoring.kinds import kind_of
from misi_bench.eval_plugins.api import runner
from misi_bench.eval_plugins.api.client import RetryPolicy
from misi_bench.eval_plugins.api.data import (
    _ENCODER,
    ImageCache,
    Question,
    QuestionSource,
    _b64encode,
    check_configs,
    request_body,
)
from misi_bench.eval_plugins.api.runner import EvalOptions, Progress, ask_all
from misi_bench.eval_plugins.api.store import RunSettings, RunStore

log = logging.getLogger(__name__)
#: The task of the synthetic questions: the first one answered by an option letter.
_LETTER_TASK = next(spec.name for spec in TASK_SPECS if kind_of(spec).carries_options)


_SOURCES: dict[str, tuple[QuestionSource, list[str], set[str]]] = {}


def _source(dataset: str) -> tuple[QuestionSource, list[str], set[str]]:
    """The build folder, its configs and its test question ids (the scorer's rows read once)."""
    if dataset not in _SOURCES:
        source = QuestionSource(dataset)
        configs = check_configs(None)
        _SOURCES[dataset] = source, configs, {str(r["id"]) for r in source.records(configs, "test")}
    return _SOURCES[dataset]


def _questions(n: int, dataset: str | None, images: ImageCache) -> Iterator[Question]:
    """``n`` questions: text only, or the build's test questions cycled in dataset order, each
    pass read from the shards by the run's reader (``QuestionSource.questions``, so its CPU is
    measured) into the run's ``images`` cache, which is emptied at each new pass (each pass is
    one run: a run reads and encodes each distinct image once, so repeats must not make it
    cheaper)."""
    if dataset is None:
        text = "Which option is right?\nA. one\nB. two\nReply with the letter only, for example: B"
        yield from (Question(f"bench-{k}", _LETTER_TASK, text, ()) for k in range(n))
        return
    source, configs, ids = _source(dataset)
    k = 0
    while k < n:
        images.clear()
        for q in source.questions(configs, "test", ids, images):
            if k == n:
                return
            yield Question(f"bench-{k}", q.task, q.question, q.images, q.error)
            k += 1


def _process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``; None elsewhere)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _EveryTime(ImageCache):
    """No cache (the behaviour before ``ImageCache``): every request encodes all its images
    (with the same encoder as the cache)."""

    def intern(self, png) -> bytes:
        return bytes(png)

    def b64(self, png) -> bytes:
        return _b64encode(png)


def _built_bodies(dataset: str, model: str) -> Iterator[bytes]:
    """The request bodies of one pass over the build's test questions, built now and cycled."""
    source, configs, ids = _source(dataset)
    images = ImageCache()
    questions = source.questions(configs, "test", ids, images)
    return itertools.cycle([request_body(q, model, images=images) for q in questions])


def measure(
    url: str,
    concurrency: int,
    n: int,
    dataset: str | None,
    server_pid: int | None = None,
    cache: bool = True,
    built: bool = False,
) -> dict:
    """Ask ``n`` questions at ``concurrency``; wall time, questions/s, client CPU per request
    (and the double's, when its ``server_pid`` is given). ``built``: send the image requests'
    bodies built beforehand (the cost of sending them, without reading or encoding)."""
    settings = RunSettings(model="double", dataset=dataset or "text-only", revision="bench")
    options = EvalOptions(
        base_url=url,
        configs=(),
        concurrency=concurrency,
        progress=False,
        policy=RetryPolicy(timeout_s=60, max_retries=2),
    )
    images = ImageCache() if cache else _EveryTime()
    questions = _questions(n, None if built else dataset, images)
    swap = contextlib.nullcontext()
    if built:
        bodies = _built_bodies(dataset, settings.model)
        swap = mock.patch.object(runner, "request_body", lambda *a, **k: next(bodies))
    with tempfile.TemporaryDirectory() as tmp, RunStore(tmp, settings) as store, swap:
        progress = Progress(n, False)
        server0 = _process_cpu_s(server_pid) if server_pid else None
        cpu0, t0 = time.process_time(), time.perf_counter()
        failed, fatal = asyncio.run(ask_all(questions, settings, options, store, progress, images))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        server1 = _process_cpu_s(server_pid) if server_pid else None
        progress.close()
    if failed or fatal:
        log.warning("%d questions failed (%s)", len(failed), fatal or next(iter(failed.values())))
    return {
        "concurrency": concurrency,
        "n": n,
        "wall_s": wall,
        "qps": progress.answered / wall,
        "cpu_ms": 1000 * cpu / n,
        "server_cpu_ms": None
        if server0 is None or server1 is None
        else 1000 * (server1 - server0) / n,
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    rows = _measure_all(args)
    _print_table(rows, args.dataset)
    _print_ratios(rows, args)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument(
        "--delay", type=float, default=0.2, help="server delay per reply, seconds (default 0.2)"
    )
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    p.add_argument(
        "--seconds", type=float, default=4.0, help="target length of each measurement (default 4)"
    )
    p.add_argument(
        "--cpu-requests",
        type=int,
        default=2000,
        help="requests of the zero-delay CPU run (default 2000)",
    )
    p.add_argument("--dataset", help="a build folder whose test questions (with images) are cycled")
    p.add_argument(
        "--built",
        action="store_true",
        help="also send the image bodies built beforehand (what sending alone costs)",
    )
    return p


def _measure_all(args: argparse.Namespace) -> list[dict]:
    """Every measurement: each concurrency against the double with ``--delay`` (s), then the
    zero-delay CPU run (with a dataset: also without the image cache, text only and, with
    ``--built``, bodies built beforehand), each server started and stopped in turn."""
    rows = []
    for delay, plan in (
        (args.delay, [(c, max(c, int(c / args.delay * args.seconds))) for c in args.concurrency]),
        (0.0, [(max(args.concurrency), args.cpu_requests)]),
    ):
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "misi_bench.eval_plugins.api.testing_server",
                "--delay",
                str(delay),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = server.stdout.readline().split()[-1]
            measure(url, min(plan[0][0], 4), 8, args.dataset)  # warm-up: connections, imports
            for c, n in plan:
                rows.append(
                    {**measure(url, c, n, args.dataset, server.pid), "delay": delay, "cache": "yes"}
                )
                if (
                    args.dataset and delay == 0.0
                ):  # without the image cache, and text only, for the ratios
                    rows.append(
                        {
                            **measure(url, c, n, args.dataset, server.pid, cache=False),
                            "delay": delay,
                            "cache": "no",
                        }
                    )
                    rows.append(
                        {
                            **measure(url, c, n, None, server.pid),
                            "delay": delay,
                            "cache": "text only",
                        }
                    )
                    if args.built:
                        rows.append(
                            {
                                **measure(url, c, n, args.dataset, server.pid, built=True),
                                "delay": delay,
                                "cache": "bodies built beforehand",
                            }
                        )
        finally:
            server.terminate()
            server.wait(10)
    return rows


def _print_table(rows: list[dict], dataset: str | None) -> None:
    """The measurements as a Markdown table (rates per second, CPU in ms per request)."""
    print(
        f"client against the PROTOCOL DOUBLE ({'text-only questions' if not dataset else dataset})"
    )
    print(
        "| server delay | concurrency | image cache | questions | q/s | ideal q/s | of ideal | client CPU/request | "
        "client req/s per core | double's CPU/request |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ideal = r["concurrency"] / r["delay"] if r["delay"] else None
        ideal_text = "-" if ideal is None else f"{ideal:.0f}"
        share = "-" if ideal is None else f"{r['qps'] / ideal:.0%}"
        server = "-" if r["server_cpu_ms"] is None else f"{r['server_cpu_ms']:.2f} ms"
        print(
            f"| {r['delay'] * 1000:.0f} ms | {r['concurrency']} | {r['cache']} | {r['n']} | {r['qps']:.1f} | "
            f"{ideal_text} | "
            f"{share} | {r['cpu_ms']:.2f} ms | {1000 / r['cpu_ms']:.0f} | "
            f"{server} |"
        )


def _print_ratios(rows: list[dict], args: argparse.Namespace) -> None:
    """The base64 encoder in use, the client CPU with images against text only, and (with a
    dataset) reading and body building alone."""
    _b64encode(b"")  # picks the encoder
    encoder = _ENCODER[0]
    print(f"base64 encoder of the image cache: {encoder.__module__}.{encoder.__name__}")
    text = [r for r in rows if r["cache"] == "text only"]
    if text:
        for label in ("yes", "no", "bodies built beforehand")[: 3 if args.built else 2]:
            ratio = (
                next(r["cpu_ms"] for r in rows if r["delay"] == 0.0 and r["cache"] == label)
                / text[0]["cpu_ms"]
            )
            what = f"image cache {label}" if label in ("yes", "no") else label
            print(
                f"client CPU per request with images, {what}: {ratio:.2f}x the text-only figure "
                f"(goal with the cache: <= 1.5x)"
            )
    if args.dataset:
        read_ms, body_ms = _prepare_ms(args.dataset)
        print(
            f"reading and encoding alone (no HTTP), median of 5 runs: {read_ms:.2f} ms reading + "
            f"{body_ms:.2f} ms building the body per question"
            + (
                f" = {(read_ms + body_ms) / text[0]['cpu_ms']:.2f}x a text-only request"
                if text
                else ""
            )
        )


def _prepare_ms(dataset: str, runs: int = 5) -> tuple[float, float]:
    """Median client CPU (ms per question) of one run's reading (``QuestionSource.questions``
    into a fresh ``ImageCache``) and of building its request bodies (each distinct image
    base64-encoded once), over ``runs`` runs of the build's test questions."""
    source, configs, ids = _source(dataset)
    reads, bodies = [], []
    for _ in range(runs):
        images = ImageCache()
        start = time.process_time()
        questions = list(source.questions(configs, "test", ids, images))
        middle = time.process_time()
        for q in questions:
            request_body(q, "bench", images=images)
        end = time.process_time()
        reads.append(1000 * (middle - start) / len(questions))
        bodies.append(1000 * (end - middle) / len(questions))
    return statistics.median(reads), statistics.median(bodies)


if __name__ == "__main__":
    raise SystemExit(main())

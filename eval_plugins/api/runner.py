"""The concurrent run of ``misi-bench eval`` and its report.

``concurrency`` workers each take the next unanswered question, build its request (each distinct
image is base64-encoded once per run, when a request first shows it, and kept in a bounded
least-recently-used cache: ``data.ImageCache``), wait for the answer and
append it to the run folder; the in-flight window is therefore exactly ``concurrency``. At the
end every selected question is scored with the one scorer (:func:`score_records`); questions
without an answer (given up, or never asked because of a fatal error) are scored as missing.
Everything the run stores or prints passes through its :class:`~.redact.Redactor` first (the
API key and the base URL's credentials never reach the run folder, the reports or the log).
A Ctrl-C stops asking, keeps every answer received and raises :class:`EvalInterrupted`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...builder.core.errors import MisiError
from ...builder.core.provenance import DatasetProvenance
from ...builder.scoring import (
    format_paper_rows_markdown,
    format_report_markdown,
    per_item_jsonl,
    score_records,
)
from ..common import dataset_provenance
from .client import ChatClient, Reply, RequestFailed, RetryPolicy
from .data import ImageCache, Question, QuestionSource, request_body
from .redact import Redactor, body_secrets, public_url, redacted_logging
from .store import PREDICTIONS, RunFolderError, RunSettings, RunStore

log = logging.getLogger(__name__)

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass(frozen=True)
class EvalOptions:
    """How to run (none of this changes an answer): the endpoint, which questions (``limit``: the
    first N of each config, in dataset order), how many requests in flight, timeouts and
    retries, the API key (never written anywhere) and the progress bar."""

    base_url: str
    configs: tuple[str, ...]
    split: str = "test"
    limit: int | None = None
    concurrency: int = 8
    policy: RetryPolicy = RetryPolicy()
    api_key: str | None = field(default=None, repr=False)
    progress: bool = True


@dataclass(frozen=True)
class EvalSummary:
    """What a run produced: the report object written to ``report.json`` and its paths."""

    run_dir: Path
    report: dict
    markdown: str
    failed: tuple[str, ...]
    fatal: str | None


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``saved`` of the ``selected`` questions have an answer on disk."""

    def __init__(self, run_dir: Path, saved: int, selected: int):
        super().__init__(f"{saved} of {selected} answers saved in {run_dir}")
        self.run_dir, self.saved, self.selected = run_dir, saved, selected


class Progress:
    """Counts of the session and the tqdm bar (live questions/s, tokens/s, retries, failures)."""

    def __init__(self, total: int, enabled: bool):
        from tqdm import tqdm  # noqa: PLC0415

        self.bar = tqdm(
            total=total,
            unit="q",
            desc="eval",
            disable=not enabled,
            dynamic_ncols=True,
            smoothing=0.1,
        )
        self.events: Counter = Counter()
        self.answered = self.failed = 0
        self.tokens: Counter = Counter()
        self.start = time.perf_counter()

    def event(self, kind: str) -> None:
        self.events[kind] += 1

    def done(self, reply: Reply | None) -> None:
        if reply is None:
            self.failed += 1
        else:
            self.answered += 1
            for key in USAGE_KEYS:
                value = reply.usage.get(key)
                if isinstance(value, (int, float)):
                    self.tokens[key] += value
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        self.bar.set_postfix_str(
            f"failed={self.failed} retries={sum(self.events.values())} 429={self.events['429']} "
            f"out_tok/s={self.tokens['completion_tokens'] / elapsed:.0f}",
            refresh=False,
        )
        self.bar.update(1)

    def close(self) -> float:
        self.bar.close()
        return time.perf_counter() - self.start


async def ask_all(
    questions: Iterator[Question],
    settings: RunSettings,
    options: EvalOptions,
    store: RunStore,
    progress: Progress,
    images: ImageCache | None = None,
    redactor: Redactor | None = None,
    config_hash: str | None = None,
) -> tuple[dict[str, str], str | None]:
    """Ask every question of ``questions`` with ``options.concurrency`` workers; returns the
    errors of the questions given up and the fatal error that stopped the run, if any.
    ``images``: the run's :class:`ImageCache` (default: a new one), so that each distinct image
    is base64-encoded once however many questions show it. ``redactor``: what to keep out of
    the stored answers and errors (default: the key and the URL's credentials). ``config_hash``:
    the build the questions come from, recorded in every stored answer."""
    images = ImageCache() if images is None else images
    if redactor is None:
        redactor = run_redactor(options, settings)
    where = public_url(options.base_url)
    failed: dict[str, str] = {}
    fatal: list[str] = []
    client = ChatClient(
        options.base_url,
        api_key=options.api_key,
        policy=options.policy,
        concurrency=options.concurrency,
        on_event=progress.event,
        redactor=redactor,
    )

    unwritable: list[RunFolderError] = []

    async def worker(slot: int) -> None:
        while not fatal and not unwritable:
            q = next(questions, None)
            if q is None:
                return
            try:
                reply = await _ask(client, q, settings, images, slot)
            except RequestFailed as exc:
                error = redactor.text(exc.error)
                stop = _fatal_message(exc, error, where, progress.answered)
                if stop is not None:
                    fatal.append(stop)
                failed[q.id] = error
                _keep(unwritable, store.add_failure, _failure_record(q, exc, error))
                progress.done(None)
                continue
            record = _answer_record(q, reply, config_hash)
            _keep(unwritable, store.add_answer, redactor.obj(record) if redactor else record)
            progress.done(reply)

    try:
        await asyncio.gather(*(worker(slot) for slot in range(max(1, options.concurrency))))
    finally:
        await client.aclose()
    if unwritable:  # a full disk: every worker stopped after its question; one line, no traceback
        raise unwritable[0]
    return failed, (fatal[0] if fatal else None)


def _keep(unwritable: list, write, record: dict) -> None:
    """``write(record)``; a run folder that cannot be written is noted (the workers stop)."""
    if unwritable:
        return
    try:
        write(record)
    except RunFolderError as exc:
        unwritable.append(exc)


async def _ask(client: ChatClient, q: Question, settings: RunSettings, images, slot: int):
    """The reply to one question; any failure that is this question's alone (a bad image, a
    reply no parser takes, an error of ours) is a :class:`RequestFailed` for it, so one bad
    item never ends the run."""
    if q.error:
        raise RequestFailed(q.error, 0)
    try:
        body = request_body(
            q,
            settings.model,
            system=settings.system,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            extra_body=settings.extra_body,
            images=images,
        )
        return await client.complete(body, q.id, slot)
    except (RequestFailed, asyncio.CancelledError):
        raise
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, UnicodeError) as exc:
        log.debug("question %s: unexpected %s", q.id, type(exc).__name__, exc_info=True)
        raise RequestFailed(f"{type(exc).__name__}: {str(exc)[:300]}", 1) from None


def _fatal_message(exc: RequestFailed, error: str, where: str, answered: int) -> str | None:
    """Why the run must stop after this failure (a fatal error, or no connection before any
    answer), or None to go on."""
    if exc.fatal:
        return f"{where}: {error}"
    if exc.kind == "connection" and not answered:
        return (
            f"cannot connect to {where} ({error}); is the server running, and is --base-url right?"
        )
    return None


def _failure_record(q: Question, exc: RequestFailed, error: str) -> dict:
    """The stored record of a question given up: its error (redacted), attempts, time (s)."""
    record = {
        "id": q.id,
        "task": q.task,
        "error": error,
        "attempts": exc.attempts,
        "time": round(time.time(), 3),
    }
    if exc.malformed:
        record["malformed"] = exc.malformed
    return record


def _answer_record(q: Question, reply, config_hash: str | None = None) -> dict:
    """The stored record of an answer: prediction, the build (``config_hash``, when known),
    usage, latency (s), attempts, time (s) and the raw reply."""
    record = {
        "id": q.id,
        "task": q.task,
        "prediction": reply.text,
        **({"config_hash": config_hash} if config_hash else {}),
        "usage": dict(reply.usage),
        "latency_s": round(reply.latency_s, 4),
        "attempts": reply.attempts,
        "time": round(time.time(), 3),
        "raw": reply.raw,
    }
    if reply.malformed:
        record["malformed"] = reply.malformed
    return record


def _usage_totals(answers: list[dict]) -> dict[str, int]:
    totals: Counter = Counter()
    for item in answers:
        usage = item.get("usage") or {}
        for key in USAGE_KEYS:
            if isinstance(usage.get(key), (int, float)):
                totals[key] += usage[key]
    return {key: int(totals[key]) for key in USAGE_KEYS}


def run_eval(
    settings: RunSettings, source: QuestionSource, options: EvalOptions, run_dir: str | Path
) -> EvalSummary:
    """Ask the unanswered questions of the selection, then score the whole selection and write
    ``report.json`` / ``report.md`` into ``run_dir``. Never raises for a failed question; a
    fatal endpoint error (401/403/404) stops asking and is returned in :attr:`EvalSummary.fatal`;
    Ctrl-C raises :class:`EvalInterrupted` once the answers received are on disk."""
    redactor = run_redactor(options, settings)
    with redacted_logging(redactor):
        return _run_eval(settings, source, options, Path(run_dir), redactor)


def run_redactor(options: EvalOptions, settings: RunSettings) -> Redactor:
    """What a run keeps out of everything it writes: the API key, the base URL's credentials
    and the secrets of ``--extra-body``."""
    return Redactor.for_endpoint(
        options.api_key, options.base_url, body_secrets(dict(settings.extra_body))
    )


def limit_records(records: list[dict], limit: int | None) -> list[dict]:
    """The first ``limit`` records of each task (all with None), in their order."""
    if limit is None:
        return records
    seen: Counter = Counter()
    out = []
    for record in records:
        seen[record["task"]] += 1
        if seen[record["task"]] <= limit:
            out.append(record)
    return out


def _run_eval(
    settings: RunSettings,
    source: QuestionSource,
    options: EvalOptions,
    run_dir: Path,
    redactor: Redactor,
) -> EvalSummary:
    records = limit_records(source.records(list(options.configs), options.split), options.limit)
    if not records:
        raise MisiError(
            f"{source.location}: no questions for configs {', '.join(options.configs)} "
            f"split {options.split}"
        )
    provenance = _provenance(source)  # the dataset's repo or path, revision, commit, build
    build = provenance.config_hash
    with RunStore(run_dir, settings) as store:
        ids = [str(r["id"]) for r in records]
        pending = [i for i in ids if i not in store.answers]
        log.log(
            logging.INFO if len(pending) < len(ids) else logging.DEBUG,  # a fresh run: the bar
            "%d questions: %d already answered in %s, %d to ask (concurrency %d)",
            len(ids),
            len(ids) - len(pending),
            store.dir,
            len(pending),
            options.concurrency,
        )
        progress = Progress(len(pending), options.progress)
        failed: dict[str, str] = {}
        fatal = None
        try:
            if pending:
                images = ImageCache()
                questions = source.questions(
                    list(options.configs), options.split, set(pending), images
                )
                failed, fatal = asyncio.run(
                    ask_all(questions, settings, options, store, progress, images, redactor, build)
                )
        except KeyboardInterrupt:
            saved = sum(i in store.answers for i in ids)
            raise EvalInterrupted(store.dir, saved, len(ids)) from None
        finally:
            elapsed = progress.close()
            store.sync()
        answers = [store.answers[i] for i in ids if i in store.answers]
        result = _score_quietly(records, answers)
        tokens = _usage_totals(answers)
        session = _session(progress, elapsed)
        latencies = sorted(
            float(a["latency_s"]) for a in answers if isinstance(a.get("latency_s"), (int, float))
        )
        report = {
            **result,
            "config_hash": build,
            "dataset": provenance.to_json(),
            "run_key": settings.key(),
            "settings": settings.to_json(),
            "base_url": public_url(options.base_url),
            "selection": {
                "configs": list(options.configs),
                "split": options.split,
                "limit": options.limit,
                "questions": len(ids),
            },
            "predictions_file": str(store.dir / PREDICTIONS),
            "failed": [{"id": i, "error": failed[i]} for i in ids if i in failed],
            "fatal_error": fatal,
            "tokens": tokens,
            "latency_s": _latency_stats(latencies),
            "session": session,
        }
        markdown = redactor.text(_markdown(report))
        text = json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        store.write_text("report.json", redactor.text(text))
        store.write_text("report.md", markdown)
        store.write_text("per_item.jsonl", per_item_jsonl(result["per_item"], build, provenance))
    failed_ids = tuple(i for i in ids if i in failed)
    return EvalSummary(Path(run_dir), report, markdown, failed_ids, fatal)


def _provenance(source: QuestionSource):
    """The run's dataset provenance: the folder, or the Hub repo at the asked revision with the
    commit the run was keyed on (when the Hub named one)."""
    if source.local:
        return dataset_provenance(source.location)
    sha = source.revision
    commit = sha if len(sha) == 40 and all(c in "0123456789abcdef" for c in sha) else None
    return dataset_provenance(source.location, source.hub_revision, commit)


def _score_quietly(records: list[dict], answers: list[dict]) -> dict:
    """The scorer's result for the stored answers (a missing prediction scores as empty; the
    scorer's own "no prediction" warning is silenced: the report says it)."""
    preds = {
        str(a["id"]): "" if a.get("prediction") is None else str(a["prediction"]) for a in answers
    }
    scorer_log = logging.getLogger(score_records.__module__)
    level = scorer_log.level
    scorer_log.setLevel(logging.ERROR)
    try:
        return score_records(records, preds)
    finally:
        scorer_log.setLevel(level)


def _session(progress: Progress, elapsed: float) -> dict:
    """This session's counts and rates: questions asked, answered and failed, wall time (s),
    questions and completion tokens per second, tokens, retried errors by kind."""
    return {
        "asked": progress.answered + progress.failed,
        "answered": progress.answered,
        "failed": progress.failed,
        "wall_s": round(elapsed, 3),
        "questions_per_s": round(progress.answered / elapsed, 3) if elapsed > 0 else None,
        "completion_tokens_per_s": round(progress.tokens["completion_tokens"] / elapsed, 1)
        if elapsed > 0
        else None,
        "tokens": {k: int(progress.tokens[k]) for k in USAGE_KEYS},
        "retried_errors": dict(progress.events),
    }


def _latency_stats(values: list[float]) -> dict:
    if not values:
        return {}

    def q(p: float) -> float:
        return round(values[min(len(values) - 1, math.ceil(p * len(values)) - 1)], 4)

    return {
        "mean": round(math.fsum(values) / len(values), 4),
        "p50": q(0.5),
        "p90": q(0.9),
        "max": values[-1],
    }


def _markdown(report: dict) -> str:
    """The scorer's per-task table followed by the headline figures of the run."""
    r, s, t = report["report"], report["session"], report["tokens"]
    asked = report["selection"]["questions"]
    lines = [
        format_report_markdown(r),  # per-task table and the named averages (paper_average first)
        format_paper_rows_markdown(r, r.get("profile")),  # comparable only for a paper build
        f"dataset: {DatasetProvenance.from_json(report['dataset']).label()}",
        f"questions: {asked}, answered: {asked - len(report['missing'])}, "
        f"missing (scored 0): {len(report['missing'])}",
        f"tokens: prompt {t['prompt_tokens']:,}, completion {t['completion_tokens']:,}, total {t['total_tokens']:,}",
        f"this session: {s['answered']} answered, {s['failed']} failed in {s['wall_s']:.1f} s "
        f"({s['questions_per_s'] or 0:.2f} questions/s, {s['completion_tokens_per_s'] or 0:.0f} completion tokens/s); "
        f"retried errors: {s['retried_errors'] or 'none'}",
    ]
    if report["failed"]:
        lines.append(
            f"failed questions (scored as missing; a rerun asks them again): "
            f"{', '.join(f['id'] for f in report['failed'])}"
        )
    if report["fatal_error"]:
        lines.append(f"stopped early: {report['fatal_error']}")
    return "\n".join(lines) + "\n"

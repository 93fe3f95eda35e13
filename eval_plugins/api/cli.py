"""``misi-bench eval``: evaluate an OpenAI-compatible chat-completions endpoint.

Exit codes: 0 every selected question answered; 3 some questions failed (listed, scored as
missing; a rerun asks them again); 2 bad input or a fatal endpoint error (401/403/404, nothing
listening: one line, no table); 130 Ctrl-C (the answers received are kept; the message says how
many and gives the command that resumes the run).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys

from ...builder.core import generation
from ...builder.core.errors import MisiError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: Value of ``--temperature`` / ``--max-tokens`` that leaves the field out (the server decides).
SERVER_DEFAULT = "server"


def _api_key(env: str | None) -> str | None:
    """The key from the named variable (an explicitly named variable must be set); never logged."""
    if env:
        key = os.environ.get(env)
        if not key:
            raise MisiError(f"--api-key-env: environment variable {env} is not set")
        return key
    return os.environ.get(DEFAULT_KEY_ENV) or None


def _extra_body(text: str | None) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise MisiError(f"--extra-body: not JSON ({str(exc)[:200]})") from None
    if not isinstance(value, dict):
        raise MisiError("--extra-body: must be a JSON object, e.g. '{\"top_p\": 1}'")
    for key in ("model", "messages"):
        if key in value:
            raise MisiError(
                f"--extra-body: may not set {key!r} (use --model; messages come from the dataset)"
            )
    if value.get("stream"):
        raise MisiError("--extra-body: 'stream' is not supported (replies are read whole)")
    return value


def _number(kind, flag: str, minimum: float):
    """An argparse type: a number >= ``minimum``, or ``server`` (None: not sent)."""

    def parse(text: str):
        if text.strip().lower() in (SERVER_DEFAULT, "none"):
            return None
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag}: expected a number or {SERVER_DEFAULT!r}, got {text!r}"
            ) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag}: must be at least {minimum}, got {text}")
        return value

    return parse


def resume_command(args: argparse.Namespace, run_dir) -> str:
    """The ``misi-bench eval`` command that resumes this run (same settings, its run folder;
    the base URL without credentials and ``--extra-body`` without its secrets, which the user
    puts back)."""
    from .redact import public_url, redact_body  # noqa: PLC0415

    words = ["misi-bench", "eval", "--base-url", public_url(args.base_url), "--model", args.model]
    extra = _extra_body(args.extra_body)
    shown = json.dumps(redact_body(extra), ensure_ascii=False) if extra else None
    for flag, value, default in (
        ("--dataset", args.dataset, None),
        ("--revision", args.revision, None),
        ("--split", args.split, "test"),
        ("--limit", args.limit, None),
        ("--system", args.system, None),
        ("--extra-body", shown, None),
        ("--api-key-env", args.api_key_env, None),
        ("--concurrency", args.concurrency, 8),
    ):
        if value != default:
            words += [flag, str(value)]
    for flag, value, default in (
        ("--temperature", args.temperature, generation.TEMPERATURE),
        ("--max-tokens", args.max_tokens, generation.MAX_TOKENS),
    ):
        if value != default:
            words += [flag, SERVER_DEFAULT if value is None else f"{value:g}"]
    if args.configs:
        words += ["--configs", *args.configs]
    words += ["--out", str(run_dir)]
    return shlex.join(words)


def cmd_eval(args: argparse.Namespace) -> int:
    from .client import RetryPolicy  # noqa: PLC0415
    from .data import QuestionSource, check_configs  # noqa: PLC0415
    from .redact import Redactor, body_secrets  # noqa: PLC0415
    from .runner import EvalInterrupted, EvalOptions, run_eval  # noqa: PLC0415
    from .store import RunSettings, default_run_dir  # noqa: PLC0415

    if args.concurrency < 1:
        raise MisiError(f"--concurrency: must be at least 1, got {args.concurrency}")
    if not args.base_url.startswith(("http://", "https://")):
        from ...builder.core.secrets import hide_keys  # noqa: PLC0415

        shown = hide_keys(args.base_url.split("@")[-1].split("?")[0])
        raise MisiError(f"--base-url: {shown!r} must start with http:// or https://")
    if args.timeout <= 0:
        raise MisiError(f"--timeout: must be positive, got {args.timeout}")
    if args.limit is not None and args.limit < 1:
        raise MisiError(f"--limit: must be at least 1, got {args.limit}")
    if args.max_malformed < 0:
        raise MisiError(f"--max-malformed: must be at least 0, got {args.max_malformed}")
    if args.max_reply_bytes < 1024:
        raise MisiError(f"--max-reply-bytes: must be at least 1024, got {args.max_reply_bytes}")
    configs = check_configs(args.configs)
    extra = _extra_body(args.extra_body)
    api_key = _api_key(args.api_key_env)
    source = QuestionSource(args.dataset, args.revision)
    settings = RunSettings(
        model=args.model,
        dataset=source.location,
        revision=source.revision,
        max_tokens=args.max_tokens,
        temperature=None if args.temperature is None else float(args.temperature),
        system=args.system,
        extra_body=extra,
    )
    run_dir = args.out or default_run_dir(settings, args.runs_root)
    options = EvalOptions(
        base_url=args.base_url.rstrip("/"),
        configs=tuple(configs),
        split=args.split,
        limit=args.limit,
        concurrency=args.concurrency,
        policy=RetryPolicy(
            timeout_s=args.timeout,
            max_retries=args.max_retries,
            backoff_s=args.backoff,
            max_backoff_s=args.max_backoff,
            max_malformed=args.max_malformed,
            max_reply_bytes=args.max_reply_bytes,
        ),
        api_key=api_key,
        progress=args.progress or (not args.no_progress and sys.stderr.isatty()),
    )
    redactor = Redactor.for_endpoint(api_key, args.base_url, body_secrets(extra))
    try:
        summary = run_eval(settings, source, options, run_dir)
    except EvalInterrupted as stop:
        print(
            f"misi-bench: interrupted: {stop.saved} of {stop.selected} answers are saved in "
            f"{stop.run_dir}; resume with:\n  {resume_command(args, stop.run_dir)}",
            file=sys.stderr,
        )
        return 130
    except MisiError as exc:
        raise MisiError(redactor.text(str(exc))) from None
    except Exception as exc:  # an unexpected error's message may quote the URL: redacted too
        if os.environ.get("MISI_BENCH_DEBUG"):
            raise
        raise MisiError(redactor.text(f"{type(exc).__name__}: {exc}")) from None
    if summary.fatal:  # one line, no table of zeros (report.md has the table)
        raise MisiError(summary.fatal)
    print(summary.markdown, end="")
    print(
        f"run folder: {summary.run_dir} (run key {settings.key()}); report: {summary.run_dir / 'report.json'}"
    )
    return 3 if summary.failed else 0


def add_commands(sub) -> None:
    """Add ``eval`` and ``serve-mock`` to the subparsers ``sub``."""
    from . import mock  # noqa: PLC0415  (light: its heavy imports are inside functions)

    p = sub.add_parser(
        "eval",
        help="evaluate an OpenAI-compatible chat-completions endpoint (resumable)",
        description=__doc__.splitlines()[0],
    )
    _add_selection_args(p)
    _add_request_args(p)
    _add_retry_args(p)
    _add_output_args(p)
    p.set_defaults(func=cmd_eval)
    mock.add_commands(sub)


def _add_selection_args(p) -> None:
    """The endpoint, the model and which questions: dataset, configs, split, how many in
    flight, limit."""
    p.add_argument(
        "--base-url", required=True, help="endpoint base URL, e.g. http://localhost:8000/v1"
    )
    p.add_argument("--model", required=True, help="model name sent in every request")
    p.add_argument(
        "--dataset",
        help="a build folder or a Hub dataset repo (default: $MISI_BENCH_REPO or the published one)",
    )
    p.add_argument(
        "--revision", help="Hub revision (tag, branch or commit; default $MISI_BENCH_REVISION)"
    )
    p.add_argument(
        "--configs", nargs="+", metavar="TASK", help="task configs (default: every task)"
    )
    p.add_argument("--split", default="test", choices=("test", "tiny"), help="split (default test)")
    p.add_argument(
        "--concurrency", type=int, default=8, help="requests in flight at most (default 8)"
    )
    p.add_argument(
        "--limit",
        type=int,
        help="ask only the first N questions of each config (dataset order; a smoke test)",
    )


def _add_request_args(p) -> None:
    """What each request carries besides the question: generation settings, system prompt,
    extra fields, the API key's variable."""
    p.add_argument(
        "--max-tokens",
        type=_number(int, "--max-tokens", 1),
        default=generation.MAX_TOKENS,
        help=f"max_tokens of each request (default {generation.MAX_TOKENS}, as the harness "
        f"files; {SERVER_DEFAULT!r}: not sent)",
    )
    p.add_argument(
        "--temperature",
        type=_number(float, "--temperature", 0.0),
        default=generation.TEMPERATURE,
        help=f"sampling temperature (default {generation.TEMPERATURE}, as the harness files; "
        f"{SERVER_DEFAULT!r}: not sent)",
    )
    p.add_argument("--system", help="system prompt (default: none)")
    p.add_argument(
        "--extra-body", help="JSON object of extra request fields, e.g. '{\"top_p\": 1}'"
    )
    p.add_argument(
        "--api-key-env",
        help=f"environment variable holding the API key (default: {DEFAULT_KEY_ENV} "
        "if set, else no key)",
    )


def _add_retry_args(p) -> None:
    """Timeouts (s), retries, the largest reply (bytes) and the retry waits (s)."""
    p.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds per request attempt, the whole reply read included (default 600)",
    )
    p.add_argument("--max-retries", type=int, default=6, help="retries per question (default 6)")
    p.add_argument(
        "--max-malformed",
        type=int,
        default=1,
        help="retries of a reply that is not a chat completion (within --max-retries; default 1)",
    )
    p.add_argument(
        "--max-reply-bytes",
        type=int,
        default=generation.MAX_REPLY_BYTES,
        help=f"largest reply body read; a longer one gives the question up (default {generation.MAX_REPLY_BYTES})",
    )
    p.add_argument(
        "--backoff",
        type=float,
        default=1.0,
        help="first retry wait in seconds, doubled each time (default 1)",
    )
    p.add_argument(
        "--max-backoff",
        type=float,
        default=60.0,
        help="longest retry wait without Retry-After (default 60)",
    )


def _add_output_args(p) -> None:
    """Where the run folder goes and the progress bar."""
    p.add_argument("--out", help="run folder (default: RUNS_ROOT/<model>-<run key>)")
    p.add_argument(
        "--runs-root",
        default="misi-runs",
        help="parent of the default run folders (default misi-runs)",
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar even when stderr is not a terminal",
    )
    bar.add_argument("--no-progress", action="store_true", help="no progress bar")

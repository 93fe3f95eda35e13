"""``misi-bench eval``: evaluate an OpenAI-compatible chat-completions endpoint.

Exit codes: 0 every selected question answered; 3 some questions failed (listed, scored as
missing; a rerun asks them again); 2 bad input or a fatal endpoint error (401/403/404).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ...builder.core.errors import MisiError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


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
    except ValueError as exc:
        raise MisiError(f"--extra-body: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise MisiError("--extra-body: must be a JSON object, e.g. '{\"top_p\": 1}'")
    for key in ("model", "messages"):
        if key in value:
            raise MisiError(
                f"--extra-body: may not set {key!r} (use --model; messages come from the dataset)"
            )
    return value


def cmd_eval(args: argparse.Namespace) -> int:
    from .client import RetryPolicy  # noqa: PLC0415
    from .data import QuestionSource, check_configs  # noqa: PLC0415
    from .runner import EvalOptions, run_eval  # noqa: PLC0415
    from .store import RunSettings, default_run_dir  # noqa: PLC0415

    if args.concurrency < 1:
        raise MisiError(f"--concurrency: must be at least 1, got {args.concurrency}")
    if not args.base_url.startswith(("http://", "https://")):
        raise MisiError(f"--base-url: {args.base_url!r} must start with http:// or https://")
    if args.timeout <= 0:
        raise MisiError(f"--timeout: must be positive, got {args.timeout}")
    configs = check_configs(args.configs)
    extra = _extra_body(args.extra_body)
    api_key = _api_key(args.api_key_env)
    source = QuestionSource(args.dataset, args.revision)
    settings = RunSettings(
        model=args.model,
        dataset=source.location,
        revision=source.revision,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        system=args.system,
        extra_body=extra,
    )
    run_dir = args.out or default_run_dir(settings, args.runs_root)
    options = EvalOptions(
        base_url=args.base_url.rstrip("/"),
        configs=tuple(configs),
        split=args.split,
        concurrency=args.concurrency,
        policy=RetryPolicy(
            timeout_s=args.timeout,
            max_retries=args.max_retries,
            backoff_s=args.backoff,
            max_backoff_s=args.max_backoff,
        ),
        api_key=api_key,
        progress=args.progress or (not args.no_progress and sys.stderr.isatty()),
    )
    summary = run_eval(settings, source, options, run_dir)
    print(summary.markdown, end="")
    print(
        f"run folder: {summary.run_dir} (run key {settings.key()}); report: {summary.run_dir / 'report.json'}"
    )
    if summary.fatal:
        raise MisiError(summary.fatal)
    return 3 if summary.failed else 0


def add_commands(sub) -> None:
    """Add ``eval`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "eval",
        help="evaluate an OpenAI-compatible chat-completions endpoint (resumable)",
        description=__doc__.splitlines()[0],
    )
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
    p.add_argument("--configs", nargs="+", metavar="TASK", help="task configs (default: all nine)")
    p.add_argument("--split", default="test", choices=("test", "tiny"), help="split (default test)")
    p.add_argument(
        "--concurrency", type=int, default=8, help="requests in flight at most (default 8)"
    )
    p.add_argument(
        "--max-tokens", type=int, help="max_tokens of each request (default: the server's)"
    )
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    p.add_argument("--system", help="system prompt (default: none)")
    p.add_argument(
        "--extra-body", help="JSON object of extra request fields, e.g. '{\"top_p\": 1}'"
    )
    p.add_argument(
        "--api-key-env",
        help=f"environment variable holding the API key (default: {DEFAULT_KEY_ENV} "
        "if set, else no key)",
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per request attempt (default 600)"
    )
    p.add_argument("--max-retries", type=int, default=6, help="retries per question (default 6)")
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
    p.set_defaults(func=cmd_eval)

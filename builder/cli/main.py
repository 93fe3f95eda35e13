"""The ``misi-bench`` command line. Each subcommand is a thin wrapper over the library.

Errors about inputs print one line ``misi-bench: error: <input>: <reason>`` and exit 2;
they never print a traceback (set MISI_BENCH_DEBUG=1 to see one). Commands come in groups, each
an ``add_commands(subparsers)`` function; a command whose parser sets ``passthrough=True``
receives its remaining arguments untouched in ``args.passthrough``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable

from ..core.constants import BUILDER_VERSION, PACKAGE_VERSION, version_label
from ..core.errors import MisiError
from . import cluster_commands, compare_command, dataset_commands, score_command, structure_commands
from .parser import Parser

log = logging.getLogger("misi_bench")

CommandGroup = Callable[[argparse._SubParsersAction], None]

#: The builder's own commands, in help order.
BUILDER_COMMANDS: tuple[CommandGroup, ...] = (
    structure_commands.add_commands,
    dataset_commands.add_commands,
    cluster_commands.add_commands,
    score_command.add_commands,
    compare_command.add_commands,
)


def _version_text() -> str:
    """``--version``: :func:`version_label` with the prompt templates of both profiles."""
    from ..core.profiles import PROFILE_NAMES  # noqa: PLC0415
    from ..tasks import TASKS  # noqa: PLC0415
    from ..tasks.data import versions_label  # noqa: PLC0415

    templates = " / ".join(f"{versions_label(TASKS, p)} ({p})" for p in PROFILE_NAMES)
    return version_label(PACKAGE_VERSION, BUILDER_VERSION, templates)


class _VersionAction(argparse.Action):
    """``--version``: one unwrapped line, worked out only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(_version_text() + "\n")
        parser.exit()


def build_parser(extra_commands: Iterable[CommandGroup] = ()) -> argparse.ArgumentParser:
    """The ``misi-bench`` parser: the builder's commands plus ``extra_commands``."""
    parser = Parser(prog="misi-bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--version", action=_VersionAction, help="show the versions (package, builder, templates)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for add_commands in (*BUILDER_COMMANDS, *extra_commands):
        add_commands(sub)
    return parser


def _split_passthrough(
    parser: argparse.ArgumentParser, argv: list[str]
) -> tuple[list[str], list[str]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if argv and argv[0] in sub.choices and sub.choices[argv[0]].get_default("passthrough"):
        return argv[:1], argv[1:]
    return argv, []


def main(argv: list[str] | None = None, extra_commands: Iterable[CommandGroup] = ()) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser(extra_commands)
    argv, passthrough = _split_passthrough(parser, list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    args.passthrough = passthrough
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("numexpr", "urllib3", "httpx", "filelock", "fsspec"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except MisiError as exc:
        if os.environ.get("MISI_BENCH_DEBUG"):
            raise
        print(f"misi-bench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("misi-bench: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        if os.environ.get("MISI_BENCH_DEBUG"):
            raise
        print(f"misi-bench: error: {exc}", file=sys.stderr)
        return 2

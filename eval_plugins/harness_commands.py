"""The harness launchers: ``misi-bench lmms-eval|vlmevalkit|lm-eval``.

Each registers the MiSI tasks with its harness and runs the harness's own entry point with the
remaining arguments passed through.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..builder.core.errors import MisiError

#: The pip extra that installs each harness (pyproject.toml's optional dependencies).
EXTRAS = {"lmms-eval": "lmms", "vlmevalkit": "vlmevalkit", "lm-eval": "lm-eval"}


def _with_harness(name: str, run: Callable[[], int]) -> int:
    """``run()``, with a missing module (the harness, or a package it needs) said in one line
    that names the ``pip install`` which brings it, instead of a traceback."""
    try:
        return run()
    except ModuleNotFoundError as exc:
        missing = exc.name or str(exc)
        raise MisiError(
            f"misi-bench {name} needs the {name} harness, and {missing!r} is not installed: "
            f"pip install 'misi-bench[{EXTRAS[name]}]'"
        ) from None


def _lmms_eval(args: argparse.Namespace) -> int:
    from .lmms_eval import cli  # noqa: PLC0415

    if "--print-include-path" in args.passthrough:
        print(cli.include_path())
        return 0
    return int(cli.run(args.passthrough) or 0)


def _vlmevalkit(args: argparse.Namespace) -> int:
    from . import vlmevalkit  # noqa: PLC0415

    return int(vlmevalkit.run(args.passthrough) or 0)


def _lm_eval(args: argparse.Namespace) -> int:
    if "--print-include-path" in args.passthrough:
        from . import lm_eval  # noqa: PLC0415

        print(lm_eval.include_path())
        return 0
    from .lm_eval import cli  # noqa: PLC0415

    return int(cli.run(args.passthrough) or 0)


def cmd_lmms_eval(args: argparse.Namespace) -> int:
    return _with_harness("lmms-eval", lambda: _lmms_eval(args))


def cmd_vlmevalkit(args: argparse.Namespace) -> int:
    return _with_harness("vlmevalkit", lambda: _vlmevalkit(args))


def cmd_lm_eval(args: argparse.Namespace) -> int:
    return _with_harness("lm-eval", lambda: _lm_eval(args))


def add_commands(sub) -> None:
    """Add the harness launchers; their arguments pass through untouched."""
    for name, func, text in (
        (
            "lmms-eval",
            cmd_lmms_eval,
            "run lmms-eval with the MiSI task folder included (arguments pass through; "
            "--print-include-path prints the folder)",
        ),
        (
            "vlmevalkit",
            cmd_vlmevalkit,
            "register the MiSI datasets in VLMEvalKit and run its runner (arguments pass through)",
        ),
        (
            "lm-eval",
            cmd_lm_eval,
            "run lm-eval with the MiSI task folder included (arguments pass through)",
        ),
    ):
        p = sub.add_parser(name, help=text, add_help=False)
        p.set_defaults(func=func, passthrough=True)

"""The harness launchers: ``misi-bench lmms-eval|vlmevalkit|lm-eval``.

Each registers the MiSI tasks with its harness and runs the harness's own entry point with the
remaining arguments passed through.
"""

from __future__ import annotations

import argparse


def cmd_lmms_eval(args: argparse.Namespace) -> int:
    from .lmms_eval import cli  # noqa: PLC0415

    if "--print-include-path" in args.passthrough:
        print(cli.include_path())
        return 0
    return int(cli.run(args.passthrough) or 0)


def cmd_vlmevalkit(args: argparse.Namespace) -> int:
    from . import vlmevalkit  # noqa: PLC0415

    return int(vlmevalkit.run(args.passthrough) or 0)


def cmd_lm_eval(args: argparse.Namespace) -> int:
    if "--print-include-path" in args.passthrough:
        from . import lm_eval  # noqa: PLC0415

        print(lm_eval.include_path())
        return 0
    from .lm_eval import cli  # noqa: PLC0415

    return int(cli.run(args.passthrough) or 0)


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

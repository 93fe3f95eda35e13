"""The evaluation front-ends' commands of ``misi-bench``.

The facade (``misi_bench.main``) adds :data:`EVAL_COMMANDS` to the builder's command line;
nothing under ``builder/`` imports this package. A new front-end adds its module's
``add_commands(subparsers)`` here (one line). Commands whose parser sets ``passthrough=True``
receive their remaining arguments untouched in ``args.passthrough``.
"""

from __future__ import annotations

from . import harness_commands
from .api import cli as api_cli
from .finetune import commands as finetune_commands
from .human import cli as human_cli
from .report import cli as report_cli

#: Command groups of the evaluation front-ends, in help order.
EVAL_COMMANDS = (
    harness_commands.add_commands,
    api_cli.add_commands,
    report_cli.add_commands,
    human_cli.add_commands,
    finetune_commands.add_commands,
)

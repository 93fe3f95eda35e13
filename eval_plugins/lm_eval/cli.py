"""Run lm-evaluation-harness with the MiSI-Bench tasks included (``misi-bench lm-eval``).

Adds ``--include_path <our folder>`` unless one is given, applies the torchvision shim (so that
``--model hf-multimodal`` imports on a CPU-only torch next to PyPI's CUDA torchvision), checks
the requested MiSI names and the data location before the run, and that every requested MiSI
task has results after it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from misi_bench.eval_plugins.lm_eval import include_path


def build_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``--include_path <our folder>`` added when the caller gave none."""
    argv = list(argv)
    if any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        return argv
    return [*argv, "--include_path", include_path()]


def run(argv: Sequence[str] | None = None) -> int:
    """Run lm-eval's command line (``lm_eval.__main__.cli_evaluate``) in this process; ``argv``
    is what would follow ``lm-eval``. Returns the exit status (2: launch refused, 1: results
    missing)."""
    from misi_bench.eval_plugins.common import call_main
    from misi_bench.eval_plugins.preflight import run_checked

    argv = list(sys.argv[1:] if argv is None else argv)

    def start():
        from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

        ensure_torchvision_importable()
        import lm_eval
        from lm_eval.__main__ import cli_evaluate

        return (
            lm_eval,
            "simple_evaluate",
            lambda: call_main("lm-eval", build_argv(argv), cli_evaluate),
        )

    return run_checked("lm-eval", argv, ("--tasks", "-t"), start)

"""MiSI-Bench for lm-evaluation-harness (multimodal ``generate_until`` tasks).

Use ``lm_eval --include_path $(python -c 'from misi_bench.eval_plugins.lm_eval import
include_path; print(include_path())') --tasks misi ...`` or ``TaskManager(include_path=
include_path())``. Tasks: ``misi_<config>`` (test split) and group ``misi``; ``tiny_misi_<config>``
(tiny split) and group ``tiny_misi``. The data location is read when a task loads
(``custom_dataset``), from ``misi_bench.hub_repo_id()`` and ``$MISI_BENCH_REVISION``.
"""

from __future__ import annotations

from pathlib import Path

TASKS_ROOT = Path(__file__).resolve().parent / "tasks"


def include_path() -> str:
    """The folder to give lm-eval's ``--include_path`` / ``TaskManager(include_path=...)``."""
    return str(TASKS_ROOT)

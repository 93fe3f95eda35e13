"""Write (or check) the generated upstream patch: a front for :mod:`..harness_files`.

``python -m misi_bench.eval_plugins.upstream.make_patches`` (or ``python -m
misi_bench.eval_plugins.harness_files``) rewrites every harness file generated from the task
registry, ``eval_plugins/upstream/lmms_eval/0001-add-misi-tasks.patch`` among them (the
lmms-eval task folder, every file, as new files under ``lmms_eval/tasks/misi/``); ``--check``
exits 1 when a committed file is out of date. The plugin-hook fix (``0002-...``) is hand-written
against lmms-eval 0.7.3 and not generated.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import harness_files
from ..harness_files import TASK_PATCH, UPSTREAM_DIR, new_file_diff

HERE = Path(__file__).resolve().parent
TASK_FOLDER = harness_files.LMMS_FOLDER
PLUGIN_PATCH = HERE / "lmms_eval" / "0002-plugin-tasks-before-task-index.patch"

__all__ = [
    "PLUGIN_PATCH",
    "TASK_FOLDER",
    "TASK_PATCH",
    "UPSTREAM_DIR",
    "main",
    "new_file_diff",
    "task_files",
    "task_folder_patch",
]


def task_files(folder: Path = TASK_FOLDER) -> list[Path]:
    """The task folder's files, sorted (compiled files and caches left out)."""
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix != ".pyc" and not p.name.startswith(".")
    )


def task_folder_patch() -> str:
    """The patch that adds the lmms-eval task folder (generated YAML included) as
    ``lmms_eval/tasks/misi/``."""
    return harness_files.lmms_patch()


def main(argv: list[str] | None = None) -> int:
    return harness_files.main(argv)


if __name__ == "__main__":
    sys.exit(main())

"""Write (or check) the generated upstream patches from the in-repo task folders.

``python -m misi_bench.eval_plugins.upstream.make_patches`` rewrites
``eval_plugins/upstream/lmms_eval/0001-add-misi-tasks.patch`` from ``eval_plugins/lmms_eval/tasks/misi``
(every file, as new files under ``lmms_eval/tasks/misi/`` of an lmms-eval checkout);
``--check`` exits 1 when the committed patch is out of date. Run it after changing any file of
the task folder. The plugin-hook fix (``0002-...``) is hand-written against lmms-eval 0.7.3 and
not generated.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK_FOLDER = HERE.parent / "lmms_eval" / "tasks" / "misi"
#: Where the folder goes inside an lmms-eval checkout (also inside an installed ``lmms_eval``'s parent).
UPSTREAM_DIR = "lmms_eval/tasks/misi"
TASK_PATCH = HERE / "lmms_eval" / "0001-add-misi-tasks.patch"
PLUGIN_PATCH = HERE / "lmms_eval" / "0002-plugin-tasks-before-task-index.patch"


def task_files(folder: Path = TASK_FOLDER) -> list[Path]:
    """The task folder's files, sorted (compiled files and caches left out)."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".pyc" and not p.name.startswith("."))


def new_file_diff(rel: str, text: str) -> str:
    """A git-style unified diff that creates ``rel`` with ``text`` (``patch -p1`` / ``git apply``)."""
    lines = text.splitlines(keepends=True)
    out = [f"diff --git a/{rel} b/{rel}\n", "new file mode 100644\n", "--- /dev/null\n", f"+++ b/{rel}\n",
           f"@@ -0,0 +1,{len(lines)} @@\n"]
    for line in lines:
        out.append("+" + line)
    if lines and not lines[-1].endswith("\n"):
        out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def task_folder_patch(folder: Path = TASK_FOLDER) -> str:
    """The patch that adds ``folder``'s files as ``lmms_eval/tasks/misi/``."""
    return "".join(new_file_diff(f"{UPSTREAM_DIR}/{p.name}", p.read_text(encoding="utf-8")) for p in task_files(folder))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed patch is out of date")
    args = parser.parse_args(argv)
    text = task_folder_patch()
    if args.check:
        if not TASK_PATCH.exists() or TASK_PATCH.read_text(encoding="utf-8") != text:
            print(f"{TASK_PATCH} is out of date: run python -m misi_bench.eval_plugins.upstream.make_patches",
                  file=sys.stderr)
            return 1
        return 0
    TASK_PATCH.write_text(text, encoding="utf-8")
    print(TASK_PATCH)
    return 0


if __name__ == "__main__":
    sys.exit(main())

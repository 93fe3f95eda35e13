"""Run lmms-eval with the MiSI-Bench tasks included.

lmms-eval has no task entry point; tasks outside its own tree are found through
``--include_path DIR`` (a folder searched recursively for ``*.yaml``). Built-in task names win
over included ones, and none of lmms-eval's tasks is named ``misi*``.

The shipped folder (``tasks/misi``) reads the canonical Hub repo. When ``misi_bench.hub_repo_id()``
names another repo or a local folder ($MISI_BENCH_REPO), or $MISI_BENCH_REVISION is set, a copy
of the folder with that ``dataset_path`` / ``revision`` is written under the cache folder
($MISI_BENCH_CACHE, else $XDG_CACHE_HOME/misi-bench, else ~/.cache/misi-bench) and that copy is
included instead. lmms-eval's YAML has no variable substitution, hence the copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from misi_bench.eval_plugins.common import call_main, data_location

#: The folder that holds ``misi/`` (what ``--include_path`` gets).
TASKS_ROOT = Path(__file__).resolve().parent / "tasks"
TEMPLATE = "_default_template_yaml"
CANONICAL_DATASET_PATH = "misi-bench/misi-bench"


def cache_root() -> Path:
    base = os.environ.get("MISI_BENCH_CACHE")
    if base:
        return Path(base).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "misi-bench"


def _render_template(text: str, dataset_path: str, revision: str | None) -> str:
    lines = []
    for line in text.splitlines():
        if line.startswith("dataset_path:"):
            line = f"dataset_path: {_yaml_str(dataset_path)}"
        lines.append(line)
        if line.startswith("dataset_kwargs:") and revision:
            lines.append(f"  revision: {_yaml_str(revision)}")
    return "\n".join(lines) + "\n"


def _yaml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def include_path(dataset_path: str | None = None, revision: str | None = None) -> str:
    """The folder to pass to lmms-eval's ``--include_path`` for the current data location.

    Defaults come from :func:`misi_bench.eval_plugins.common.data_location`. Returns the shipped
    folder for the canonical repo without revision, else a rendered copy (rewritten only when
    its content would change, so concurrent runs see a complete folder).
    """
    if dataset_path is None:
        dataset_path, env_revision = data_location()
        revision = revision or env_revision
    if dataset_path == CANONICAL_DATASET_PATH and not revision:
        return str(TASKS_ROOT)
    src = TASKS_ROOT / "misi"
    files = {
        p.name: p.read_bytes() for p in sorted(src.iterdir()) if p.is_file() and p.suffix != ".pyc"
    }
    files[TEMPLATE] = _render_template(files[TEMPLATE].decode(), dataset_path, revision).encode()
    digest = hashlib.sha256()
    for name, data in files.items():
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    root = cache_root() / "lmms_eval_tasks" / digest.hexdigest()[:16]
    target = root / "misi"
    if not (root / ".complete").exists():
        tmp = Path(str(root) + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "misi").mkdir(parents=True)
        for name, data in files.items():
            (tmp / "misi" / name).write_bytes(data)
        (tmp / ".complete").write_text(f"dataset_path={dataset_path}\nrevision={revision or ''}\n")
        try:
            os.replace(tmp, root)
        except OSError:  # another process won the race; its copy is identical
            shutil.rmtree(tmp, ignore_errors=True)
    assert target.is_dir(), target
    return str(root)


def _wants_include(argv: Sequence[str]) -> bool:
    """True for an evaluation run (``lmms-eval --model ...`` or ``lmms-eval eval ...``)."""
    if not argv:
        return False
    return argv[0] == "eval" or argv[0].startswith("-")


def build_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``--include_path <our folder>`` added to an evaluation run.

    lmms-eval takes one ``--include_path``; when the caller already gives one, it is kept and a
    warning says that the MiSI tasks were not added.
    """
    argv = list(argv)
    if not _wants_include(argv):
        return argv
    if any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        print(
            "misi-bench: --include_path given; the MiSI-Bench tasks are not added "
            f"(include {include_path()} yourself)",
            file=sys.stderr,
        )
        return argv
    return [*argv, "--include_path", include_path()]


def run(argv: Sequence[str] | None = None) -> int:
    """Run lmms-eval's own command line in this process with the MiSI-Bench tasks included.

    ``argv`` is what would follow ``lmms-eval`` (e.g. ``["--model", "dummy", "--tasks",
    "misi", "--output_path", "out"]``). Before the run, the MiSI names asked for must exist and
    the data location must resolve; after it, every requested MiSI task must have results
    (lmms-eval itself exits 0 on such errors). Returns the exit status (2: launch refused,
    1: results missing).
    """
    from misi_bench.eval_plugins.preflight import run_checked

    argv = list(sys.argv[1:] if argv is None else argv)

    def start():
        from misi_bench.eval_plugins._torch_compat import ensure_torchvision_importable

        ensure_torchvision_importable()
        from lmms_eval import evaluator
        from lmms_eval.cli.dispatch import main as lmms_main

        return (
            evaluator,
            "simple_evaluate",
            lambda: call_main("lmms-eval", build_argv(argv), lmms_main),
        )

    return run_checked("lmms-eval", argv, ("--tasks",), start, check=_wants_include(argv))

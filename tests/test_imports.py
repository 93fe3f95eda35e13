"""Every module of the package imports (the fast lane's floor for modules that only heavy runs or
maintainer use exercise: benchmarks, maintainer scripts, the harnesses' weight-free oracles)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = ("builder", "eval_plugins", "dataset_card")
#: Modules that import a harness at import time; vlmeval turns TLS verification off process-wide,
#: so these are imported in a child process, never in the test process.
HARNESS_MODULES = (
    "misi_bench.eval_plugins.lmms_eval.models.misi_oracle",
    "misi_bench.eval_plugins.vlmevalkit.oracle",
)


def _module_names() -> list[str]:
    names = []
    for top in PACKAGE_DIRS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append("misi_bench." + ".".join(parts))
    # the maintainer scripts outside the wheel, importable from a checkout as ``scripts.<name>``
    names += [f"scripts.{p.stem}" for p in sorted((ROOT / "scripts").glob("[!_]*.py"))]
    return names


MODULES = [name for name in _module_names() if name not in HARNESS_MODULES]


def test_every_folder_is_found():
    assert "scripts.bench_render" in MODULES
    assert set(HARNESS_MODULES) <= set(_module_names())
    assert len(MODULES) > 100


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    assert importlib.import_module(name).__name__ == name


@pytest.mark.slow  # imports lmms-eval and VLMEvalKit in a child (13 s); their harness runs are slow too
def test_harness_modules_import_in_a_child_process():
    code = "import importlib, sys; [importlib.import_module(n) for n in sys.argv[1:]]; print('ok')"
    proc = subprocess.run(
        [sys.executable, "-c", code, *HARNESS_MODULES],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


@pytest.mark.parametrize("top", ["builder", "eval_plugins", "dataset_card"])
def test_a_package_folder_under_its_top_level_name_is_refused(top):
    """From a checkout root (on sys.path in an editable install) ``import builder...`` would load
    second copies of every module and class; the folders refuse that name."""
    proc = subprocess.run(
        [sys.executable, "-c", f"import {top}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode != 0 and "ImportError" in proc.stderr, proc.stderr[-2000:]
    assert f"as misi_bench.{top}" in proc.stderr


def test_one_copy_of_each_class():
    import misi_bench

    errors = importlib.import_module("misi_bench.builder.core.errors")
    assert errors.MisiError is misi_bench.MisiError
    assert issubclass(misi_bench.InputError, errors.MisiError)
    assert "builder" not in sys.modules and "builder.core.errors" not in sys.modules

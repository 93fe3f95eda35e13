"""Another revision's code side by side with this one, in the same process (for benchmarks that
time old and new code alternately).

:func:`baseline_package` extracts ``builder`` of a git revision of this repository into a
folder as a package of another name (its imports are relative, so it runs as it is) and puts
it on ``sys.path``; :func:`translate` turns an object of this code (a request, a complex) into
the same object of the baseline's classes (by pickling), so that its ``isinstance`` checks hold.
"""

from __future__ import annotations

import importlib
import io
import pickle
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = __name__.rsplit(".scripts.", 1)[0]  # "misi_bench.builder"


def baseline_package(rev: str, into: Path, name: str = "misi_baseline") -> str:
    """Extract REV's ``builder`` as package ``name`` under ``into`` and make it importable."""
    archive = Path(into) / "baseline.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "builder"], check=True
    )
    tree = Path(into) / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    (tree / "builder").rename(tree / name)
    sys.path.insert(0, str(tree))
    importlib.invalidate_caches()
    return name


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, package: str):
        super().__init__(io.BytesIO(data))
        self.package = package

    def find_class(self, module: str, name: str):
        if module == OURS or module.startswith(OURS + "."):
            module = self.package + module[len(OURS) :]
        return super().find_class(module, name)


def translate(obj, package: str):
    """``obj`` rebuilt from the baseline package's classes."""
    return _Unpickler(pickle.dumps(obj), package).load()

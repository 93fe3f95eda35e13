"""Another revision's code in a child process, driven command by command (for benchmarks that
time old and new code alternately on the same inputs).

:class:`Baseline` extracts ``builder`` of a git revision of this repository as a package of
another name (``misi_baseline``; its imports are relative, so it runs as it is), starts a
Python child that imports it and runs ``setup`` (code that defines handler functions), and
sends it JSON commands ``{"op": NAME, ...}``; the child answers each with one JSON line, the
handler's return value. Inputs travel as pickles of this code's objects (requests,
complexes), which the child rebuilds from the baseline's classes (``load_ours``), so that its
``isinstance`` checks hold.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = "misi_bench.builder"
PACKAGE = "misi_baseline"

_PRELUDE = """
import io, json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
OURS, PACKAGE = sys.argv[2], sys.argv[3]

class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module == OURS or module.startswith(OURS + "."):
            module = PACKAGE + module[len(OURS):]
        return super().find_class(module, name)

def load_ours(path):
    with open(path, "rb") as fh:
        return _Unpickler(fh).load()
"""

_LOOP = """
for line in sys.stdin:
    command = json.loads(line)
    print(json.dumps(globals()[command.pop("op")](**command)), flush=True)
"""


def extract_revision(rev: str, into: Path, package: str = PACKAGE) -> Path:
    """Write ``builder`` of git revision ``rev`` as ``<into>/tree/<package>``; returns the
    folder to put on ``sys.path``."""
    into = Path(into)
    archive = into / "baseline.tar"
    subprocess.run(
        ["git", "-C", str(ROOT), "archive", "-o", str(archive), rev, "builder"], check=True
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    (into / "tree" / "builder").rename(into / "tree" / package)
    return into / "tree"


class Baseline:
    """REV's code in a child process (see the module docstring)."""

    def __init__(self, rev: str, into: Path, setup: str):
        into = Path(into)
        extract_revision(rev, into)
        self.child = subprocess.Popen(
            [sys.executable, "-c", _PRELUDE + setup + _LOOP, str(into / "tree"), OURS, PACKAGE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, op: str, **args):
        self.child.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait(60)


def render_version_commits() -> list[tuple[str, str]]:
    """(short commit, RENDER_VERSION) of each commit that changed the renderer's version
    (``builder/scene/requests.py``), newest first."""
    import re  # noqa: PLC0415

    out = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--format=%h", "-G", "^RENDER_VERSION = ", "--",
         "builder/scene/requests.py"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    found = []
    for commit in out:
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:builder/scene/requests.py"],
            capture_output=True, text=True, check=False,
        ).stdout  # fmt: skip
        match = re.search(r'^RENDER_VERSION = "?(\w+)"?', text, re.M)
        if match:
            found.append((commit, match.group(1)))
    return found


def dump(obj, path: Path) -> str:
    """Pickle ``obj`` (this code's objects) to ``path`` for the child's ``load_ours``."""
    Path(path).write_bytes(pickle.dumps(obj))
    return str(path)

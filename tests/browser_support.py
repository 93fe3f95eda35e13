"""Headless Chromium (Debian's ``chromium`` package) driven by Playwright, for the browser tests.

Playwright's own browser download is never used (``playwright install`` is not run): the
system browser at :data:`CHROMIUM` is launched with the flags below.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def browser() -> Iterator:
    """A launched Playwright Chromium browser (closed on exit)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "apt-get install chromium (CI installs it in .ci/run)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@contextlib.contextmanager
def human_app(dataset: Path, out: Path, *extra: str) -> Iterator[str]:
    """Run ``misi-bench human DATASET --port 0 --out OUT`` in a subprocess; yield its URL."""
    cmd = [
        sys.executable,
        "-c",
        "import sys, misi_bench; sys.exit(misi_bench.main())",
        "human",
        str(dataset),
        "--port",
        "0",
        "--out",
        str(out),
        *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"serving on (http://\S+)", line)
            if m:
                yield m.group(1)
                break
        else:
            raise AssertionError("the app did not start:\n" + "".join(lines))
    finally:
        proc.terminate()
        proc.wait(timeout=30)

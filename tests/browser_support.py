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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlparse

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


@dataclass(frozen=True)
class HumanLinks:
    """The links ``misi-bench human`` prints: the participants' and the administrator's."""

    url: str  # the participants' link (with ?token=)
    admin: str  # the administrator's link

    @property
    def base(self) -> str:
        return self.url.split("?", 1)[0]

    @property
    def token(self) -> str:
        return parse_qs(urlparse(self.url).query)["token"][0]

    @property
    def admin_token(self) -> str:
        return parse_qs(urlparse(self.admin).query)["token"][0]


@contextlib.contextmanager
def human_app(dataset: Path, out: Path, *extra: str) -> Iterator[HumanLinks]:
    """Run ``misi-bench human DATASET --port 0 --out OUT`` in a subprocess; yield its links."""
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
        admin = None
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"administrator link .*?(http://\S+)", line)
            if m:
                admin = m.group(1)
            m = re.search(r"serving on (http://\S+)", line)
            if m:
                assert admin, "the administrator link is printed first:\n" + "".join(lines)
                yield HumanLinks(m.group(1), admin)
                break
        else:
            raise AssertionError("the app did not start:\n" + "".join(lines))
    finally:
        proc.terminate()
        proc.wait(timeout=30)

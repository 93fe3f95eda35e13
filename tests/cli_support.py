"""The command line as tests run it in a child process, and the arguments of an ``eval`` run
against a local protocol double (a stand-in OpenAI-compatible endpoint, not a model)."""

from __future__ import annotations

import sys

#: ``misi-bench`` in a child process of this interpreter (the checkout or the installed wheel).
CLI = [sys.executable, "-c", "import sys, misi_bench; sys.exit(misi_bench.main())"]


def eval_args(url: str, data_dir, out, *extra: str, model: str = "double") -> list[str]:
    """``eval`` of ``data_dir`` against the endpoint at ``url`` into ``out``, then ``extra``."""
    return [
        "eval",
        "--base-url",
        url,
        "--model",
        model,
        "--dataset",
        str(data_dir),
        "--out",
        str(out),
        *extra,
    ]


def one_error_line(proc, *words: str, code: int | None = 2) -> str:
    """The one ``misi-bench: error:`` line of a failed child run ``proc`` (exit ``code``; None:
    any non-zero exit), with no traceback, holding every one of ``words``."""
    if code is None:
        assert proc.returncode != 0, proc.stdout[-1500:]
    else:
        assert proc.returncode == code, proc.stdout[-1000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("misi-bench: error:")]
    assert len(lines) == 1, proc.stderr[-2000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]

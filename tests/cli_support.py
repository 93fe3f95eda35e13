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

"""MiSI-Bench: microscopic spatial intelligence benchmark (public API and ``misi-bench`` command).

Installed from a wheel this file is ``misi_bench/__init__.py`` and ``builder/``,
``eval_plugins/`` and ``dataset_card/`` are its subpackages. In an editable checkout this file
is a top-level module whose ``__path__`` points at the checkout root, so the same
``misi_bench.builder...`` imports resolve to ``./builder``. Nothing heavy happens at import time:
names below are loaded on first use.
"""
from __future__ import annotations

import importlib
import os as _os
import sys as _sys

_HERE = _os.path.dirname(_os.path.abspath(__file__))
if globals().get("__path__") is None:  # editable checkout: behave as a package rooted here
    __path__ = [_HERE]
    if __name__ != "__main__":
        __package__ = __name__
elif not _os.path.isdir(_os.path.join(_HERE, "builder")):
    # editable install through hatch: this file was copied to site-packages/misi_bench/ while the
    # subpackages stay in the checkout, which the install put on sys.path
    __path__ += [p for p in _sys.path if _os.path.isfile(_os.path.join(p or ".", "misi_bench.py"))
                 and _os.path.isdir(_os.path.join(p or ".", "builder"))][:1]

__version__ = "0.1.0"

#: The canonical Hub repository of the published benchmark; override with $MISI_BENCH_REPO.
DEFAULT_HUB_REPO = "misi-bench/misi-bench"


def hub_repo_id() -> str:
    """Dataset location used by the evaluation plugins: $MISI_BENCH_REPO or the canonical repo."""
    return _os.environ.get("MISI_BENCH_REPO") or DEFAULT_HUB_REPO


_LAZY = {
    # structures and chemistry
    "ComplexRef": "builder.structure",
    "Complex": "builder.structure",
    "load_complex": "builder.structure",
    "read_pdbbind_dir": "builder.structure",
    "read_raw_entry": "builder.structure",
    "sample_refs": "builder.samples",
    "InputError": "builder.errors",
    "MisiError": "builder.errors",
    # hydrogen bonds
    "HBond": "builder.hbonds",
    "detect_hbonds": "builder.hbonds",
    # geometry and rendering
    "Move": "builder.geometry",
    "Roll": "builder.geometry",
    "parse_operations": "builder.geometry",
    "format_operations": "builder.geometry",
    "RenderRequest": "builder.render",
    "render_png": "builder.render",
    # tasks, scoring, dataset
    "TASKS": "builder.tasks",
    "score_prediction": "builder.scoring",
    "score_records": "builder.scoring",
    "build_dataset": "builder.build",
    "validate_dataset": "builder.validate",
    "MisiBenchBuilder": "builder.hf_builder",
    "MisiBenchConfig": "builder.hf_builder",
}

__all__ = sorted([*_LAZY, "DEFAULT_HUB_REPO", "hub_repo_id", "main", "__version__"])


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'misi_bench' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``misi-bench`` command (see ``misi-bench --help``)."""
    from .builder.cli import main as cli_main  # noqa: PLC0415 (lazy on purpose)

    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())

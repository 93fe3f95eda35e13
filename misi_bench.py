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
    __path__ += [
        p
        for p in _sys.path
        if _os.path.isfile(_os.path.join(p or ".", "misi_bench.py"))
        and _os.path.isdir(_os.path.join(p or ".", "builder"))
    ][:1]

_LAZY = {
    # constants (defined once, in builder.core.constants)
    "__version__": ("builder.core.constants", "PACKAGE_VERSION"),
    "DEFAULT_HUB_REPO": "builder.core.constants",
    "hub_repo_id": "builder.core.constants",
    # structures and chemistry
    "ComplexRef": "builder.core.records",
    "Complex": "builder.core.records",
    "load_complex": "builder.chemistry.structure",
    "read_pdbbind_dir": "builder.chemistry.structure",
    "read_raw_entry": "builder.chemistry.structure",
    "sample_refs": "builder.chemistry.samples",
    "InputError": "builder.core.errors",
    "MisiError": "builder.core.errors",
    # hydrogen bonds
    "HBond": "builder.chemistry.hbonds",
    "detect_hbonds": "builder.chemistry.hbonds",
    # geometry and rendering
    "Move": "builder.operations.language",
    "Roll": "builder.operations.language",
    "parse_operations": "builder.operations.language",
    "format_operations": "builder.operations.language",
    "RenderRequest": "builder.scene.requests",
    "render_png": "builder.scene.cache",
    # tasks, scoring, dataset
    "TASKS": "builder.tasks",
    "score_prediction": "builder.scoring",
    "score_records": "builder.scoring",
    "build_dataset": "builder.dataset.build",
    "BuildConfig": "builder.dataset.config",
    "BuildOptions": "builder.dataset.config",
    "validate_dataset": "builder.checks.validate",
    "MisiBenchBuilder": "builder.dataset.hf_builder",
    "MisiBenchConfig": "builder.dataset.hf_builder",
}

__all__ = sorted([*_LAZY, "main"])


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'misi_bench' has no attribute {name!r}")
    module, attribute = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value
    return value


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``misi-bench`` command: the builder's commands joined with the
    evaluation front-ends' commands (see ``misi-bench --help``)."""
    from .builder.cli.main import main as builder_main  # noqa: PLC0415 (lazy: nothing at import time)
    from .eval_plugins.cli import EVAL_COMMANDS  # noqa: PLC0415

    return builder_main(argv, extra_commands=EVAL_COMMANDS)


if __name__ == "__main__":  # `python -m misi_bench`: run the package's own module, not this copy
    from misi_bench import main as _package_main  # noqa: PLC0415

    raise SystemExit(_package_main())

"""The examples in the public API's docstrings run (biotite-style: documentation that is
executed, so it cannot drift from the code). Fast lane."""

from __future__ import annotations

import doctest
import importlib
import types

import pytest

#: Modules whose docstring examples run here: the public API's readers, parsers and scorer.
MODULES = (
    "misi_bench.builder.operations.language",
    "misi_bench.builder.core.registry",
    "misi_bench.builder.core.rows",
    "misi_bench.builder.scoring.metrics",
    "misi_bench.builder.scoring.report",
    "misi_bench.builder.chemistry.structure",
    "misi_bench.builder.scene.pillow_core",
)
#: Public functions (``misi_bench.<name>``) that must carry at least one example.
WITH_EXAMPLES = (
    "parse_operations",
    "format_operations",
    "score_prediction",
    "load_complex",
)


def run_examples(module: types.ModuleType) -> doctest.TestResults:
    return doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=False)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = run_examples(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no docstring example"
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed (above)"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_public_functions_have_examples(name):
    import misi_bench

    assert ">>> " in (getattr(misi_bench, name).__doc__ or ""), name


def test_canonical_task_has_an_example():
    from misi_bench.builder.core.registry import canonical_task

    assert ">>> canonical_task(" in canonical_task.__doc__


def test_a_wrong_example_is_caught():
    module = types.ModuleType("planted")
    module.__doc__ = ">>> 1 + 1\n3\n"
    assert run_examples(module) == doctest.TestResults(failed=1, attempted=1)

"""One room per task (issue 21): everything task-specific is reached through the task's registry
entry (``builder/core/registry.py``) or its own module under ``builder/tasks/``; shared machinery
dispatches on the entry's data (answer kind, halves, labels, form) or the room's hooks, never on a
task's name. Checked with ``ast``: outside those places (the registry, each task's own module,
maintainer scripts) no string constant equals a task config name, the shared modules of
``builder/tasks/`` included; and no test function branches on more than one task name (per-task
expectations come from the registry or the task's data file, ``tests/task_expect.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

from misi_bench.builder.checks.declared import CHECKS, declared
from misi_bench.builder.core import registry
from misi_bench.builder.core.registry import ANSWER_KINDS, TASK_BY_NAME, TASK_NAMES, TASK_SPECS
from misi_bench.builder.scoring.kinds import kind_of

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("builder", "eval_plugins", "dataset_card", "misi_bench.py")
#: Where task names may be spelled out: the registry and each task's own module (the maintainer
#: scripts of ``scripts/`` are not scanned).
ROOMS_AND_SCRIPTS = (
    "builder/core/registry.py",
    *(f"builder/tasks/{name}.py" for name in TASK_NAMES),
)


def name_constants(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every string constant of ``source`` that equals one of ``names``."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]


def _scanned_files() -> list[Path]:
    files = []
    for entry in SCANNED:
        path = ROOT / entry
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [
        p
        for p in files
        if "__pycache__" not in p.parts
        and not p.relative_to(ROOT).as_posix().startswith(ROOMS_AND_SCRIPTS)
    ]


def test_no_task_name_outside_the_rooms():
    names = set(TASK_NAMES)
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in _scanned_files()
        for line, text in name_constants(path.read_text(encoding="utf-8"), names)
    ]
    assert not found, (
        "task names spelled out in shared code (use the registry entry or the task's room):\n"
        + "\n".join(found)
    )


def test_the_scan_sees_a_planted_task_name():
    planted = 'def f(task):\n    if task == "docking":\n        return f"{task}"\n    return {"x": "zooming"}\n'
    assert name_constants(planted, set(TASK_NAMES)) == [(2, "docking"), (4, "zooming")]
    assert name_constants('x = "misi_docking"\n', set(TASK_NAMES)) == []


def test_the_scan_covers_the_shared_layers():
    scanned = {p.relative_to(ROOT).as_posix() for p in _scanned_files()}
    for expected in (
        "builder/scoring/metrics.py",
        "builder/checks/validate.py",
        "builder/checks/audit.py",
        "eval_plugins/human/session.py",
        "eval_plugins/report/reference.py",
    ):
        assert expected in scanned
    for shared in ("__init__", "base", "room", "choice", "decoys", "recover", "replay", "data"):
        assert f"builder/tasks/{shared}.py" in scanned
    assert not any(p == f"builder/tasks/{name}.py" for name in TASK_NAMES for p in scanned)


def dispatch_chains(source: str, names: set[str]) -> list[tuple[int, str, list[str]]]:
    """(line, function, names) of every function of ``source`` whose conditions (``if``,
    ``elif``, conditional expressions, comprehension filters) compare with more than one task
    name: a chain that dispatches on names."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        seen: set[str] = set()
        for node in ast.walk(fn):
            tests = [node.test] if isinstance(node, (ast.If, ast.IfExp, ast.While)) else []
            tests += node.ifs if isinstance(node, ast.comprehension) else []
            compares = [c for t in tests for c in ast.walk(t) if isinstance(c, ast.Compare)]
            seen |= {text for c in compares for _, text in name_constants_of(c, names)}
        if len(seen) > 1:
            found.append((fn.lineno, fn.name, sorted(seen)))
    return found


def name_constants_of(node: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    return [
        (n.lineno, n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
    ]


def test_no_test_dispatches_on_task_names():
    names = set(TASK_NAMES)
    found = [
        f"{path.relative_to(ROOT)}:{line} {fn}: {', '.join(hit)}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for line, fn, hit in dispatch_chains(path.read_text(encoding="utf-8"), names)
    ]
    assert not found, (
        "tests that branch on task names (parametrize over the registry; put the expectation in "
        "the task's data file `expect` section or derive it from the registry entry):\n"
        + "\n".join(found)
    )


def test_the_chain_scan_sees_a_planted_chain():
    planted = (
        "def test_x(task):\n"
        "    if task == 'docking':\n"
        "        pass\n"
        "    elif task in ('zooming', 'rotation'):\n"
        "        pass\n"
        "def test_one(rows):\n"
        "    return [r for r in rows if r['task'] == 'docking']\n"
    )
    assert dispatch_chains(planted, set(TASK_NAMES)) == [
        (1, "test_x", ["docking", "rotation", "zooming"])
    ]


def test_every_registry_entry_has_its_room_and_only_it():
    from misi_bench.builder.tasks import ROOMS, room_of

    assert [r.name for r in ROOMS] == list(TASK_NAMES)
    for spec in TASK_SPECS:
        r = room_of(spec.name)
        assert r.spec is spec
        assert r.generate.__module__.endswith(f"builder.tasks.{spec.name}")
        assert callable(r.replay) and callable(r.check)
        # the room declares its checks (its kind's defaults, its own, less those it declines):
        # each declared one runs through its hook; any other is not applicable, with its reason
        mine = declared(spec.name)
        for check in CHECKS:
            found = check.applies_to(spec.name)
            has_hook = check.hook is None or getattr(r, check.hook) is not None
            assert found.applies == (check.name in mine and has_hook), (spec.name, check.name)
            assert found.applies or found.reason, (spec.name, check.name)
    # T8's question names an H-bond in its option pictures: it adds legibility to its kind's
    assert "legibility" in declared("interaction_location")


def test_registry_entries_are_complete_data():
    for spec in TASK_SPECS:
        kind = kind_of(spec)  # raises for a kind no module of builder/scoring/kinds gives
        assert kind.name in ANSWER_KINDS
        assert spec.label and spec.short_label
        # the answer format and the human app's form follow from the one kind
        choice = kind.carries_options
        assert (kind.form == registry.CHOICE_FORM) == choice
        assert (kind.answer_format == registry.MULTIPLE_CHOICE) == choice
        assert choice or spec.form_hint
        if kind.needs_commands:
            assert spec.commands and all(
                c.verb in ("move", "roll") and c.values for c in spec.commands
            )
        else:
            assert not spec.commands and spec.constant_answer
        assert registry.canonical_task(f"T{spec.number}") == spec.name
        assert all(registry.canonical_task(alias) == spec.name for alias in spec.aliases)
    assert TASK_BY_NAME["residue_ligand"].halves == "polarity"

"""The layering of the package holds (README "Architecture", issue 21 step 3).

Walks every module with ``ast`` (imports inside functions included) and fails on: a module in
a folder that no layer entry names (a new folder fails until it is placed), an import of our own
code that points up or sideways, a third-party package the layer does not list (the scorer:
numpy and yaml only), an import cycle, a module over the size limit, an ``importlib`` /
``__import__`` load (it would hide an import from these checks), a package ``__init__`` that
imports a heavy library at import time (``try``-wrapped or not) or has no docstring. Each rule has
a self-test that plants a violation and sees it caught.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = ("builder", "eval_plugins", "dataset_card")
MAX_MODULE_LINES = 500
#: Modules being split right now (each by its own change); remove a name when its split lands.
PENDING_SPLIT: set[str] = set()

_BUILDER_BELOW_DATASET = {
    "builder.core",
    "builder.operations",
    "builder.chemistry",
    "builder.scene",
    "builder.tasks",
    "builder.scoring",
}
#: What front-ends share: the registry and records (core), the scorer, the operation language.
_FRONT_END = {"builder.core", "builder.scoring", "builder.operations.language"}
#: The eval_plugins modules every harness adapter may use.
_EVAL_BASE = {"eval_plugins.common", "eval_plugins.preflight", "eval_plugins._torch_compat"}


@dataclass(frozen=True)
class Layer:
    """One folder of the package: the layers and modules of ours it may import (besides its own
    folder) and the third-party packages it may import (anywhere in its modules)."""

    ours: frozenset[str] = field(default_factory=frozenset)
    third_party: frozenset[str] = field(default_factory=frozenset)


def _layer_entry(ours=(), third_party=()) -> Layer:
    return Layer(frozenset(ours), frozenset(third_party))


#: One entry per folder (dotted path; ``facade`` is ``misi_bench.py``). A module belongs to the
#: entry of its own folder, never to an entry of a folder above it.
LAYERS: dict[str, Layer] = {
    "facade": _layer_entry(
        {
            "builder.core",
            "builder.operations",
            "builder.chemistry",
            "builder.scene",
            "builder.tasks",
            "builder.scoring",
            "builder.dataset",
            "builder.cli",
            "eval_plugins",
        }
    ),
    "builder": _layer_entry(),  # the package __init__: a docstring only
    "builder.core": _layer_entry((), {"numpy"}),
    "builder.operations": _layer_entry({"builder.core"}, {"numpy"}),
    "builder.chemistry": _layer_entry({"builder.core"}, {"numpy", "gemmi", "rdkit", "biotite"}),
    "builder.scene": _layer_entry(
        {"builder.core", "builder.operations"}, {"numpy", "PIL", "deflate"}
    ),
    "builder.tasks": _layer_entry(
        {"builder.core", "builder.operations", "builder.chemistry", "builder.scene"},
        {"numpy", "yaml"},
    ),
    "builder.scoring": _layer_entry(
        {"builder.core", "builder.operations.language"}, {"numpy", "yaml"}
    ),
    "builder.dataset": _layer_entry(
        _BUILDER_BELOW_DATASET,
        {"numpy", "PIL", "yaml", "datasets", "pyarrow", "huggingface_hub", "tqdm"},
    ),
    "builder.cli": _layer_entry(_BUILDER_BELOW_DATASET | {"builder.dataset"}, {"datasets"}),
    # maintainer scripts: benchmarks and the reference tools they compare with (never imported)
    "builder.scripts": _layer_entry(
        _BUILDER_BELOW_DATASET | {"builder.dataset"},
        {"numpy", "gemmi", "rdkit", "openbabel", "plip", "pymol2"},
    ),
    "dataset_card": _layer_entry(),
    # eval_plugins: the top folder holds the shared base (common, preflight) and the command table
    "eval_plugins": _layer_entry(
        _FRONT_END
        | {
            "eval_plugins.api",
            "eval_plugins.finetune",
            "eval_plugins.human",
            "eval_plugins.lm_eval",
            "eval_plugins.lmms_eval",
            "eval_plugins.report",
            "eval_plugins.vlmevalkit",
        },
        {"PIL", "datasets", "pyarrow", "huggingface_hub", "torch"},
    ),
    "eval_plugins.api": _layer_entry(
        _FRONT_END | _EVAL_BASE,
        {"PIL", "datasets", "httpx", "huggingface_hub", "numpy", "pyarrow", "pybase64", "tqdm"},
    ),
    "eval_plugins.finetune": _layer_entry(
        _FRONT_END | _EVAL_BASE, {"datasets", "huggingface_hub", "pyarrow", "tqdm"}
    ),
    "eval_plugins.human": _layer_entry(
        _FRONT_END | _EVAL_BASE | {"eval_plugins.report"}, {"pyarrow"}
    ),
    "eval_plugins.report": _layer_entry(
        _FRONT_END | _EVAL_BASE | {"eval_plugins.vlmevalkit.datasets"},
        {"matplotlib", "numpy", "pyarrow"},
    ),
    "eval_plugins.lm_eval": _layer_entry(_FRONT_END | _EVAL_BASE, {"lm_eval"}),
    "eval_plugins.lm_eval.tasks.misi": _layer_entry(_EVAL_BASE),
    "eval_plugins.lmms_eval": _layer_entry(_FRONT_END | _EVAL_BASE, {"lmms_eval"}),
    "eval_plugins.lmms_eval.models": _layer_entry(_FRONT_END | _EVAL_BASE, {"lmms_eval"}),
    "eval_plugins.lmms_eval.tasks": _layer_entry(),
    "eval_plugins.lmms_eval.tasks.misi": _layer_entry(_EVAL_BASE),
    "eval_plugins.vlmevalkit": _layer_entry(
        _FRONT_END | _EVAL_BASE, {"datasets", "pandas", "vlmeval"}
    ),
    "eval_plugins.upstream": _layer_entry({"eval_plugins.harness_files"}),
}
#: Third-party modules a package ``__init__`` must not import at import time (they make
#: ``import`` slow), whether or not the import sits in a ``try``.
HEAVY = {
    "PIL",
    "gemmi",
    "rdkit",
    "datasets",
    "pyarrow",
    "torch",
    "matplotlib",
    "biotite",
    "huggingface_hub",
    "lmms_eval",
    "lm_eval",
    "vlmeval",
    "pandas",
    "transformers",
    "httpx",
    "scipy",
    "numpy",
    "yaml",
    "tqdm",
}
#: Calls that load a module by name at run time.
DYNAMIC_LOADS = {
    "import_module",
    "__import__",
    "spec_from_file_location",
    "module_from_spec",
    "exec_module",
    "SourceFileLoader",
    "load_module",
}
_STDLIB = set(sys.stdlib_module_names)


# --------------------------------------------------------------------------------------------
# The walker
# --------------------------------------------------------------------------------------------


def _module_name(path: Path, root: Path = ROOT) -> str:
    if path.name == "misi_bench.py":
        return "facade"
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {"facade": ROOT / "misi_bench.py"}
    for top in PACKAGE_DIRS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


MODULES = _modules()


def _folder(module: str, is_init: bool) -> str:
    """The dotted folder a module lives in (a package ``__init__`` lives in its own folder)."""
    if module == "facade" or is_init:
        return module
    return module.rpartition(".")[0]


def layer_of(module: str, is_init: bool, layers: dict[str, Layer] = LAYERS) -> str | None:
    """The layer entry of a module: the entry of its own folder, None when no entry names it."""
    folder = _folder(module, is_init)
    return folder if folder in layers else None


def _ours(name: str) -> str | None:
    if name == "misi_bench":
        return "facade"
    if name.startswith("misi_bench."):
        return name[len("misi_bench.") :]
    return None


def _resolve(
    module: str, is_init: bool, node: ast.ImportFrom | ast.Import, modules=MODULES
) -> list[str]:
    """Package modules (our names, without ``misi_bench.``) that one import statement reaches."""
    if isinstance(node, ast.Import):
        return [o for o in (_ours(a.name) for a in node.names) if o]
    if node.level:
        base = (
            [] if module == "facade" else (module.split(".") if is_init else module.split(".")[:-1])
        )
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = _ours(node.module or "")
        if not target:
            return []
    reached = []
    for alias in node.names:
        sub = f"{target}.{alias.name}" if target else alias.name
        reached.append(sub if sub in modules else target or "facade")
    return reached


def _third_party(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        names = [a.name.split(".")[0] for a in node.names]
    elif not node.level and node.module:
        names = [node.module.split(".")[0]]
    else:
        names = []
    return {n for n in names if n not in _STDLIB and n not in ("misi_bench", "__future__")}


@dataclass
class Scan:
    """What one module imports: our modules, third-party packages (anywhere), third-party
    packages imported at import time (module level, inside ``try``/``if``/``with`` too), and the
    dynamic loads it calls."""

    ours: set[str] = field(default_factory=set)
    third_party: set[str] = field(default_factory=set)
    at_import: set[str] = field(default_factory=set)
    dynamic: list[str] = field(default_factory=list)


def _lazy_targets(tree: ast.Module) -> set[str]:
    """The facade's ``_LAZY`` table: module paths it loads by name (kept in the import graph)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets
        ):
            for value in node.value.values:
                target = value.elts[0] if isinstance(value, ast.Tuple) else value
                out.add(target.value)
    return out


def _module_level(tree: ast.Module):
    """Statements run at import time: the module body and blocks nested in it, not functions or
    class bodies' methods."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def scan(module: str, source: str, is_init: bool, modules=MODULES) -> Scan:
    tree = ast.parse(source)
    out = Scan()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.ours.update(
                m for m in _resolve(module, is_init, node, modules) if m in modules and m != module
            )
            out.third_party |= _third_party(node)
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if name in DYNAMIC_LOADS:
                out.dynamic.append(f"line {node.lineno}: {name}()")
    for node in _module_level(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.at_import |= _third_party(node)
    if module == "facade":
        # the facade's one lazy loader: its table of names is part of the graph, not a hole
        out.ours |= {m for m in _lazy_targets(tree) if m in modules}
        out.dynamic = [d for d in out.dynamic if not d.endswith("import_module()")]
    if module == "builder.tasks":
        # the rooms' one loader imports builder/tasks/<name>.py for each registry name (so that
        # a new task is listed by its registry entry alone): those modules join the graph
        from misi_bench.builder.core.registry import TASK_NAMES  # noqa: PLC0415

        out.ours |= {f"builder.tasks.{n}" for n in TASK_NAMES} & set(modules)
        out.dynamic = [d for d in out.dynamic if not d.endswith("import_module()")]
    return out


def _is_init(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


SCANS = {
    m: scan(m, p.read_text(encoding="utf-8"), p.name == "__init__.py") for m, p in MODULES.items()
}
GRAPH = {m: s.ours for m, s in SCANS.items()}


def allowed(source_layer: str, target: str, layers: dict[str, Layer] = LAYERS) -> bool:
    """May a module of ``source_layer`` import our module ``target``?"""
    target_is_init = target in MODULES and MODULES[target].name == "__init__.py"
    if _folder(target, target_is_init) == source_layer:
        return True  # its own folder
    return any(target == a or target.startswith(a + ".") for a in layers[source_layer].ours)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def init_problems(module: str, source: str) -> list[str]:
    """A package ``__init__``: heavy imports at import time, a missing docstring (top packages)."""
    out = []
    heavy = scan(module, source, True).at_import & HEAVY
    if heavy:
        out.append(f"{module}/__init__.py imports {sorted(heavy)} at import time")
    if (
        module.count(".") <= 1
        and not module.startswith("dataset_card")
        and not ast.get_docstring(ast.parse(source))
    ):
        out.append(f"{module}/__init__.py needs a docstring saying what it owns and may import")
    return out


# --------------------------------------------------------------------------------------------
# The rules, on every module
# --------------------------------------------------------------------------------------------


def test_every_module_is_in_a_layer():
    unplaced = sorted(m for m in MODULES if layer_of(m, _is_init(m)) is None)
    assert not unplaced, (
        f"modules in no layer (add their folder to tests/test_architecture.py LAYERS): {unplaced}"
    )


def test_every_layer_entry_names_a_folder():
    folders = {_folder(m, _is_init(m)) for m in MODULES}
    assert not set(LAYERS) - folders, (
        f"layer entries without modules: {sorted(set(LAYERS) - folders)}"
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    layer = layer_of(module, _is_init(module))
    bad = sorted(t for t in GRAPH[module] if not allowed(layer, t))
    assert not bad, (
        f"{module} ({layer}) imports {bad}: not allowed by the layering (README Architecture)"
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_third_party_imports_are_listed_for_the_layer(module):
    layer = layer_of(module, _is_init(module))
    bad = sorted(SCANS[module].third_party - LAYERS[layer].third_party)
    assert not bad, f"{module} ({layer}) imports {bad}: not among the layer's third-party packages"


def test_scorer_needs_only_numpy_and_yaml():
    assert LAYERS["builder.scoring"].third_party == {"numpy", "yaml"}
    used = set().union(*(SCANS[m].third_party for m in MODULES if m.startswith("builder.scoring")))
    assert used <= {"numpy", "yaml"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_dynamic_imports(module):
    assert not SCANS[module].dynamic, (
        f"{module} loads modules by name ({SCANS[module].dynamic}): import them"
    )


def test_no_import_cycles():
    assert not find_cycles(GRAPH), f"import cycles: {find_cycles(GRAPH)}"


def size_problem(module: str, source: str) -> str | None:
    lines = len(source.splitlines())
    if lines <= MAX_MODULE_LINES:
        return None
    return f"{module} has {lines} lines (limit {MAX_MODULE_LINES}): split it by job"


@pytest.mark.parametrize("module", sorted(set(MODULES) - PENDING_SPLIT))
def test_module_size(module):
    problem = size_problem(module, MODULES[module].read_text(encoding="utf-8"))
    assert problem is None, problem


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_package_init_is_light_and_documented(module):
    problems = init_problems(module, MODULES[module].read_text(encoding="utf-8"))
    assert not problems, "; ".join(problems)


# --------------------------------------------------------------------------------------------
# Self-tests: each rule catches a planted violation
# --------------------------------------------------------------------------------------------


def test_planted_new_folder_is_in_no_layer():
    assert layer_of("builder.newstage.thing", False) is None
    assert layer_of("builder.newstage", True) is None
    assert layer_of("eval_plugins.newharness.cli", False) is None
    assert layer_of("builder.scene.raster", False) == "builder.scene"
    assert layer_of("eval_plugins.common", False) == "eval_plugins"


def test_planted_upward_import_is_caught():
    node = ast.parse("from ..dataset.build import build_dataset\n").body[0]
    reached = _resolve("builder.scene.raster", False, node)
    assert reached == ["builder.dataset.build"]
    assert not allowed("builder.scene", "builder.dataset.build")
    assert allowed("builder.dataset", "builder.scene.camera")
    assert not allowed("builder.scoring", "builder.operations.transforms")
    assert not allowed("eval_plugins.report", "builder.tasks")
    # a subfolder is not the folder above it
    assert not allowed("eval_plugins.upstream", "eval_plugins.common")


def test_planted_third_party_import_is_caught():
    planted = (
        "import numpy as np\nimport yaml\n\ndef f():\n    from PIL import Image\n    import torch\n"
    )
    found = scan("builder.scoring.planted", planted, False, MODULES).third_party
    assert found == {"numpy", "yaml", "PIL", "torch"}
    assert found - LAYERS["builder.scoring"].third_party == {"PIL", "torch"}


def test_planted_dynamic_import_is_caught():
    planted = (
        "import importlib\nfrom importlib import import_module as load\n\n"
        "def f(name):\n    importlib.import_module(name)\n    __import__(name)\n    return load(name)\n"
    )
    found = scan("builder.tasks.planted", planted, False, MODULES).dynamic
    assert found == ["line 5: import_module()", "line 6: __import__()"]
    # an aliased import_module is seen through its import: the import of importlib itself
    assert "importlib" not in scan("builder.tasks.planted", planted, False, MODULES).third_party
    assert scan(
        "builder.tasks.planted",
        "import importlib.util as u\nu.spec_from_file_location('m', 'p')\n",
        False,
        MODULES,
    ).dynamic == ["line 2: spec_from_file_location()"]


def _loader_imports(source: str) -> list[str]:
    """``from importlib import import_module`` (aliased or not) and the like: a loader that a
    later call could use under any name."""
    return [
        f"line {n.lineno}: {a.name}"
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.ImportFrom) and n.module in ("importlib", "importlib.util")
        for a in n.names
        if a.name in DYNAMIC_LOADS
    ]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_dynamic_loader_imported(module):
    assert not _loader_imports(MODULES[module].read_text(encoding="utf-8"))


def test_planted_aliased_loader_is_caught():
    assert _loader_imports("from importlib import import_module as load\nload('x')\n") == [
        "line 1: import_module"
    ]
    assert _loader_imports("from importlib import resources\n") == []


def test_planted_cycle_is_caught():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_planted_long_module_is_caught():
    assert size_problem("builder.planted", "x = 1\n" * (MAX_MODULE_LINES + 1)) is not None
    assert size_problem("builder.planted", "x = 1\n" * MAX_MODULE_LINES) is None


def test_planted_heavy_init_is_caught():
    wrapped = '"""Doc."""\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n'
    assert init_problems("builder.planted", wrapped) == [
        "builder.planted/__init__.py imports ['torch'] at import time"
    ]
    guarded = '"""Doc."""\nimport os\nif os.environ.get("X"):\n    from PIL import Image\n'
    assert init_problems("builder.planted", guarded) == [
        "builder.planted/__init__.py imports ['PIL'] at import time"
    ]
    lazy = '"""Doc."""\ndef f():\n    import torch\n'
    assert init_problems("builder.planted", lazy) == []
    assert init_problems("builder.planted", "import os\n") == [
        "builder.planted/__init__.py needs a docstring saying what it owns and may import"
    ]

"""The layering of the package holds (README "Architecture"): walks every module's imports with
``ast`` (imports inside functions included) and fails on a forbidden arrow, an import cycle, a
module over the size limit or a package ``__init__`` that imports heavy libraries."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = ("builder", "eval_plugins", "dataset_card")
MAX_MODULE_LINES = 500
#: Modules being split right now (each by its own change); remove a name when its split lands.
PENDING_SPLIT: set[str] = set()

#: What each layer may import (besides itself). ``scoring`` and ``eval_plugins`` may use only the
#: operation *language*, not the coordinate transforms.
ALLOWED: dict[str, set[str]] = {
    "builder": set(),  # the package __init__: a docstring only
    "builder.core": set(),
    "builder.operations": {"builder.core"},
    "builder.chemistry": {"builder.core"},
    "builder.scene": {"builder.core", "builder.operations"},
    "builder.tasks": {"builder.core", "builder.operations", "builder.chemistry", "builder.scene"},
    "builder.scoring": {"builder.core", "builder.operations.language"},
    "builder.dataset": {"builder.core", "builder.operations", "builder.chemistry", "builder.scene", "builder.tasks",
                        "builder.scoring"},
    "builder.cli": {"builder.core", "builder.operations", "builder.chemistry", "builder.scene", "builder.tasks",
                    "builder.scoring", "builder.dataset"},
    "builder.scripts": {"builder.core", "builder.operations", "builder.chemistry", "builder.scene", "builder.tasks",
                        "builder.scoring", "builder.dataset"},
    "eval_plugins": {"builder.core", "builder.scoring", "builder.operations.language"},
    "dataset_card": set(),
    "facade": {"builder.core", "builder.operations", "builder.chemistry", "builder.scene", "builder.tasks",
               "builder.scoring", "builder.dataset", "builder.cli", "eval_plugins"},
}
#: Third-party modules a package ``__init__`` must not import (they make ``import`` slow).
HEAVY = {"PIL", "gemmi", "rdkit", "datasets", "pyarrow", "torch", "matplotlib", "biotite", "huggingface_hub",
         "lmms_eval", "lm_eval", "vlmeval", "pandas", "transformers", "httpx", "scipy"}


def _module_name(path: Path) -> str:
    if path.name == "misi_bench.py":
        return "facade"
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
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


def _resolve(module: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """Package modules (our names, without ``misi_bench.``) that one import statement reaches."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
        return [_ours(n) for n in names if _ours(n)]
    if node.level:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        if module == "facade":
            base = []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = _ours(node.module or "")
        if not target:
            return []
    reached = []
    for alias in node.names:
        sub = f"{target}.{alias.name}" if target else alias.name
        reached.append(sub if sub in MODULES else target or "facade")
    return reached


def _ours(name: str) -> str | None:
    if name == "misi_bench":
        return "facade"
    if name.startswith("misi_bench."):
        return name[len("misi_bench."):]
    return None


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(package modules imported anywhere in the module, third-party top-level names imported at
    module level)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    ours: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            ours.update(m for m in _resolve(module, path, node) if m in MODULES and m != module)
    top_level = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top_level.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            top_level.add(node.module.split(".")[0])
    return ours, top_level


GRAPH = {m: _imports(m)[0] for m in MODULES}


def _layer(module: str) -> str:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    raise AssertionError(f"module {module} belongs to no layer: add it to tests/test_architecture.py ALLOWED")


def _allowed(source: str, target: str) -> bool:
    layer = _layer(source)
    if target == layer or target.startswith(layer + "."):
        return True
    return any(target == a or target.startswith(a + ".") for a in ALLOWED[layer])


def test_every_module_is_in_a_layer():
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    bad = sorted(t for t in GRAPH[module] if not _allowed(module, t))
    assert not bad, f"{module} ({_layer(module)}) imports {bad}: not allowed by the layering (README Architecture)"


def test_no_import_cycles():
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
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

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(set(MODULES) - PENDING_SPLIT))
def test_module_size(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines (limit {MAX_MODULE_LINES}): split it by job"


@pytest.mark.parametrize("module", sorted(m for m, p in MODULES.items() if p.name == "__init__.py"))
def test_package_init_is_light_and_documented(module):
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    _, top_level = _imports(module)
    assert not (top_level & HEAVY), f"{module}/__init__.py imports {sorted(top_level & HEAVY)} at import time"
    if module.count(".") <= 1 and not module.startswith("dataset_card"):
        assert ast.get_docstring(tree), f"{module}/__init__.py needs a docstring saying what it owns and may import"


def test_checker_sees_a_forbidden_import(tmp_path):
    """The walker itself: an upward import written into a scene module is found."""
    fake = ast.parse("from ..dataset.build import build_dataset\n").body[0]
    reached = _resolve("builder.scene.raster", ROOT / "builder/scene/raster.py", fake)
    assert reached == ["builder.dataset.build"]
    assert not _allowed("builder.scene.raster", "builder.dataset.build")
    assert _allowed("builder.dataset.build", "builder.scene.camera")
    assert not _allowed("builder.scoring.scorer", "builder.operations.transforms")

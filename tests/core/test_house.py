"""The shape of the library: rules a maintainer can rely on, checked on the source itself.

* no function or method in ``dpsynth_core`` longer than :data:`MAX_FUNCTION_LINES` lines;
* no module longer than :data:`MAX_MODULE_LINES` lines;
* no import of another module's ``_``-prefixed name (a package may import its own private submodules);
* no import cycle between the modules of ``dpsynth_core`` (imports inside functions included: a lazy
  import hides a cycle from the interpreter, not from a reader);
* imports inside functions only for optional or heavy dependencies (:data:`LAZY_ALLOWED`).

The checks read the source with :mod:`ast`; nothing is imported or run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "dpsynth_core"
MAX_FUNCTION_LINES = 120
MAX_MODULE_LINES = 1000
#: Top-level packages a function may import lazily: optional extras (plotly, scikit-learn, Dask, pyarrow,
#: threadpoolctl) or heavy ones that most calls do not need (POT pulls scikit-learn and scipy.stats; numba
#: compiles on first use).
LAZY_ALLOWED = {"plotly", "sklearn", "dask", "distributed", "pyarrow", "ot", "numba", "threadpoolctl", "matplotlib",
                "scipy", "pylmcf"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _tree(name: str) -> ast.Module:
    return ast.parse(MODULES[name].read_text(encoding="utf-8"))


def _package_of(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def _resolve(name: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(name).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str) -> list[tuple[str, ast.AST, bool]]:
    """(imported module, node, inside a function) for every import of module ``name``."""
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, child, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(name, child)
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    out.append((sub if sub in MODULES else target, child, in_function))
            visit(child, inner)

    visit(_tree(name), False)
    return out


def test_no_function_is_too_long():
    long = []
    for name in MODULES:
        for node in ast.walk(_tree(name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {size} lines")
    assert not long, long


def test_no_module_is_too_long():
    long = [f"{name}: {n} lines" for name, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, long


def test_no_private_name_is_imported_from_another_module():
    bad = []
    for name in MODULES:
        for node in ast.walk(_tree(name)):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _resolve(name, node)
            for a in node.names:
                own_submodule = f"{target}.{a.name}" in MODULES and target == _package_of(name)
                if a.name.startswith("_") and not a.name.startswith("__") and not own_submodule:
                    bad.append(f"{name}: from {target} import {a.name}")
            if any(part.startswith("_") and not part.startswith("__") for part in target.split(".")) \
                    and not target.startswith(_package_of(name)):
                bad.append(f"{name}: imports from the private module {target}")
    assert not bad, bad


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name in MODULES:
        for target, _node, _lazy in _imports(name):
            # importing a.b.c runs a and a.b first; a package's face is a dependency like any module
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                mod = ".".join(parts[:i])
                if mod in MODULES and mod != name and not name.startswith(mod + "."):
                    graph[name].add(mod)
    return graph


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                dfs(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node, [])
    assert not cycles, cycles


def test_lazy_imports_only_for_optional_or_heavy_dependencies():
    bad = []
    for name in MODULES:
        for target, node, lazy in _imports(name):
            if lazy and target.split(".")[0] not in LAZY_ALLOWED:
                bad.append(f"{name}:{node.lineno}: import of {target} inside a function")
    assert not bad, bad


@pytest.mark.parametrize("rule", ["function", "module"])
def test_the_limits_are_what_the_docs_say(rule):
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    number = MAX_FUNCTION_LINES if rule == "function" else MAX_MODULE_LINES
    assert f"{number} lines" in text

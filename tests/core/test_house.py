"""The shape of the library and the dashboard: rules a maintainer can rely on, checked on the source itself.

* no function or method anywhere (``dpsynth_core`` with its CLI, ``dashboard/``, ``app_pages/``, ``app.py``,
  ``serve.py``) longer than :data:`MAX_FUNCTION_LINES` lines as written: from its first decorator to its last
  line, docstring, comments and blank lines included;
* no module of ``dpsynth_core`` longer than :data:`MAX_MODULE_LINES` lines, none of ``dashboard/`` or
  ``app_pages/`` longer than :data:`MAX_DASHBOARD_MODULE_LINES`;
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
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 1000
MAX_DASHBOARD_MODULE_LINES = 300
#: Functions over the limit in code another change is rewriting at the same time, with where they are split:
#: each must still be over it (a shortened one is taken off this list), and none may be added casually.
OVER_THE_LIMIT: dict[str, str] = {}
#: Modules over the dashboard's limit that a later step of the same change rewrites (each must still be over).
DASHBOARD_OVER_THE_LIMIT: dict[str, str] = {}
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


def _lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's length as written: from its first decorator (or its ``def``) to its last line, docstring,
    comments and blank lines included (a reader scrolls through all of them)."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return node.end_lineno - first + 1


def _dashboard_modules() -> dict[str, Path]:
    paths = [ROOT / "app.py", *sorted((ROOT / "dashboard").glob("*.py")), *sorted((ROOT / "app_pages").glob("*.py"))]
    return {str(p.relative_to(ROOT).with_suffix("")).replace("/", "."): p for p in paths}


def _defined(module: str, tree: ast.AST) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method of a module, named ``module.Class.function`` (nested ones by their path)."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((name, child))
                visit(child, name)
            else:
                visit(child, prefix)

    visit(tree, module)
    return out


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The functions the size rule covers: the library (its CLI included), the dashboard and the server."""
    paths = {**MODULES, **_dashboard_modules(), "serve": ROOT / "serve.py"}
    return [f for name, path in paths.items() for f in _defined(name, ast.parse(path.read_text(encoding="utf-8")))]


def _too_long(functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]) -> list[str]:
    return [f"{name}: {_lines(node)} lines" for name, node in functions
            if _lines(node) > MAX_FUNCTION_LINES and name not in OVER_THE_LIMIT]


def test_no_function_is_too_long():
    long = _too_long(_functions())
    assert not long, long


def _function_text(name: str, decorator_args: int, code: int, indent: str = "") -> str:
    """A decorated function: 2 + ``decorator_args`` decorator lines, its ``def``, a 59-line docstring, a comment, a
    blank line and ``code`` lines of code."""
    decorator = f"{indent}@register(\n" + f"{indent}    x=1,\n" * decorator_args + f"{indent})\n"
    docstring = f'{indent}    """Doc.\n' + "\n" * 57 + f'{indent}    """\n'
    body = f"{indent}    # a comment\n\n" + f"{indent}    y = 1\n" * (code - 1) + f"{indent}    return y\n"
    return decorator + f"{indent}def {name}():\n" + docstring + body


def test_the_size_rule_counts_the_whole_function():
    """Decorators, the docstring, comments and blank lines count: of two functions whose code is 9 lines, the
    one of 81 lines in all (10 of them its decorator) is over the limit and the one of 80 is not; a method is
    named with its class."""
    src = (_function_text("f", 8, 9) + "\n\n" + _function_text("g", 7, 9) + "\n\nclass C:\n"
           + _function_text("h", 8, 9, indent="    "))
    assert _too_long(_defined("m", ast.parse(src))) == ["m.f: 81 lines", "m.C.h: 81 lines"]


def test_the_functions_let_off_are_still_over_the_limit():
    """An exception ends when its function is shortened: then it leaves :data:`OVER_THE_LIMIT`."""
    sizes = {name: _lines(node) for name, node in _functions()}
    stale = [name for name in OVER_THE_LIMIT if sizes.get(name, 0) <= MAX_FUNCTION_LINES]
    assert not stale, stale


def test_no_module_is_too_long():
    long = [f"{name}: {n} lines" for name, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, long


def test_no_dashboard_module_is_too_long():
    """A page or a dashboard module is short enough to read at once; ``release_panel`` was 601 lines."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in _dashboard_modules().values() if p.name != "app.py"}
    long = [f"{name}: {n} lines" for name, n in sizes.items()
            if n > MAX_DASHBOARD_MODULE_LINES and name not in DASHBOARD_OVER_THE_LIMIT]
    stale = [name for name in DASHBOARD_OVER_THE_LIMIT if sizes.get(name, 0) <= MAX_DASHBOARD_MODULE_LINES]
    assert not long and not stale, (long, stale)


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


@pytest.mark.parametrize("number", [MAX_FUNCTION_LINES, MAX_MODULE_LINES, MAX_DASHBOARD_MODULE_LINES])
def test_the_limits_are_what_the_docs_say(number):
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"{number} lines" in text


# ------------------------------------------------------------------ typed facts, not parsed prose
#: The one module that may read a release's words: it makes them (docs/architecture.md, "Typed facts").
WORDING_MODULE = ROOT / "dpsynth_core" / "wording.py"
#: Where code reads releases: the library, the dashboard and its pages, the benchmarks.
PRODUCT_CODE = [PKG, ROOT / "dashboard", ROOT / "app_pages", ROOT / "benchmarks", ROOT / "app.py", ROOT / "serve.py"]
#: The texts a release (or a report, or a table read) carries for people, not for code.
PROSE = {"bound_kind", "notes", "note"}
_TEXT_TESTS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "lower", "upper", "casefold",
               "split", "partition", "strip"}


def _is_prose(node: ast.AST, tainted: set[str]) -> bool:
    """Whether the expression IS a release's prose: ``rel.bound_kind``, ``rel.notes``, ``rep["notes"]``, a name
    bound by iterating over one (``for note in rel.notes``), an item of one, or text made of one
    (``" ".join(rel.notes)``, ``rel.bound_kind.lower()``). ``note.topic`` is a typed fact, not prose."""
    if isinstance(node, ast.Name):
        return node.id in tainted
    if isinstance(node, ast.Attribute):
        return node.attr in PROSE
    if isinstance(node, ast.Subscript):
        key = node.slice
        return (isinstance(key, ast.Constant) and key.value in PROSE) or _is_prose(node.value, tainted)
    if isinstance(node, ast.Call):
        func, args = node.func, [*node.args, *(k.value for k in node.keywords)]
        if isinstance(func, ast.Attribute) and func.attr in ("join", "lower", "upper", "casefold", "strip", "format"):
            return _is_prose(func.value, tainted) or any(_contains_prose(a, tainted) for a in args)
        if isinstance(func, ast.Name) and func.id in ("str", "repr"):
            return any(_is_prose(a, tainted) for a in args)
    return False


def _contains_prose(node: ast.AST, tainted: set[str]) -> bool:
    return any(_is_prose(sub, tainted) for sub in ast.walk(node))


def _prose_tests(path: Path, root: Path = ROOT) -> list[str]:
    """Every place in ``path`` that tests a release's text (named relative to ``root``), in line order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tainted: set[str] = set()
    for node in ast.walk(tree):  # names that hold one of the texts: loop and comprehension variables
        if isinstance(node, (ast.For, ast.comprehension)) and _is_prose(node.iter, set()):
            tainted |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            if any(_is_prose(side, tainted) for side in [node.left, *node.comparators]):
                found.append((node.lineno, "a substring test on a release's text"))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _TEXT_TESTS and _is_prose(func.value, tainted):
                found.append((node.lineno, f".{func.attr}() on a release's text"))
            elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "re"
                  and any(_contains_prose(a, tainted) for a in node.args)):
                found.append((node.lineno, f"re.{func.attr}() on a release's text"))
    return [f"{path.relative_to(root)}:{line}: {what}" for line, what in sorted(found)]


def test_no_code_reads_a_release_by_its_words():
    """The kind of a bound, whether it says anything, what a note is about: typed facts (``Release.bound_type``,
    ``Release.bound_is_vacuous``, ``Domain.diameter``, ``Table.text_columns``...). Matching the words of
    ``bound_kind`` or of the notes would let a rewording change what a page shows; only the library's
    wording module, which writes those words, may look at them."""
    files = [p for root in PRODUCT_CODE for p in ([root] if root.suffix == ".py" else sorted(root.rglob("*.py")))
             if p != WORDING_MODULE and "results" not in p.parts
             and not any(part.startswith(".venv") for part in p.parts)]  # the peers' own environment (benchmarks)
    found = [hit for p in files for hit in _prose_tests(p)]
    assert not found, found


def test_the_prose_check_finds_what_it_looks_for(tmp_path):
    """The check above is not blind: each way of reading a release's words is found."""
    src = tmp_path / "x.py"
    src.write_text("import re\n"
                   "a = 'certificate' in rel.bound_kind\n"
                   "b = any('reference' in n for n in rel.notes)\n"
                   "for note in rep['notes']:\n    c = note.startswith('No W1')\n"
                   "d = re.search(r'rate', rel.bound_kind)\n"
                   "e = rel.bound_kind.lower()\n"
                   "f = rel.bound_type is BoundKind.RATE and 'x' in other_text\n"
                   "g = 'reference' in ' '.join(map(str, rel.notes))\n"
                   "h = [n for n in table.notes if n.topic in ('text', 'excluded')]\n", encoding="utf-8")
    hits = _prose_tests(src, tmp_path)
    assert [h.split(":")[1] for h in hits] == ["2", "3", "5", "6", "7", "9"], hits


#: The dashboard's own code.
DASHBOARD = [ROOT / "dashboard", ROOT / "app_pages", ROOT / "app.py"]
_SETTING_NAMES = {"epsilon", "delta", "neighbours", "seed"}


def _dashboard_files() -> list[Path]:
    return [p for root in DASHBOARD for p in ([root] if root.suffix == ".py" else sorted(root.rglob("*.py")))]


def test_the_privacy_settings_are_read_by_name_not_by_key():
    """``state.settings()`` is a frozen ``PrivacySettings``: no page reads ``s["epsilon"]`` from a dict."""
    found = []
    for path in _dashboard_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                    and node.slice.value in _SETTING_NAMES
                    and (isinstance(node.value, ast.Name) and node.value.id == "s"
                         or isinstance(node.value, ast.Call) and getattr(node.value.func, "attr",
                                                                        getattr(node.value.func, "id", "")) == "settings")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found


def test_no_page_does_numerical_work():
    """A page reads as a short story: controls, one library call, figures, a sentence. The numbers come from
    the library, so a page imports neither numpy nor scipy (indexing a library's array needs neither)."""
    heavy = {}
    for path in sorted((ROOT / "app_pages").glob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module.split(".")[0])
        heavy[str(path.relative_to(ROOT))] = names & {"numpy", "scipy"}
    doing = [p for p, n in heavy.items() if n]
    assert not doing, doing


def test_only_the_state_module_touches_the_session_state():
    """``dashboard/state.py`` owns the session: every key behind a typed accessor there, none read or written by
    name anywhere else in the dashboard."""
    owner = ROOT / "dashboard" / "state.py"
    found = []
    for path in _dashboard_files():
        if path == owner:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "session_state":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found


def test_the_architecture_names_every_dashboard_module():
    """docs/architecture.md says what each module of ``dashboard/`` owns: a new module is written down there."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [p.stem for p in sorted((ROOT / "dashboard").glob("*.py"))
               if p.stem != "__init__" and f"**`{p.stem}`**" not in text]
    assert not missing, missing

"""The house rules of the code, checked on every run (docs/architecture.md draws the house).

* Imports run one way: each folder of `scanner/` may import only from the folders below it
  (`LAYERS`), and no module imports itself back through others — counting imports inside
  functions and under `TYPE_CHECKING`, which hide cycles but are cycles all the same, and the
  functions a table names as `"module:function"` to import on first use (`scanner.rules.documents`).
* Every module imports on its own, in a fresh interpreter.

A module holds one concept whole, whatever its length.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scanner", "streams")

# scanner/<folder> → its floor; a module may import from its own floor or any floor below.
LAYERS = {
    "core": 0,
    "readers": 1,
    "rules": 2,
    "engine": 3,
    "fix": 4,
    "report": 4,
    "gitlab": 5,
    "instance": 5,
    "commands": 6,
    "cli": 7,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


MODULES = _modules()


_LAZY = re.compile(r"(?:scanner|streams)(?:\.\w+)+:\w+")  # `module:name`, imported on first use


def _imports(name: str, path: Path) -> set[str]:
    """Every project module `name` imports, wherever the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _LAZY.fullmatch(node.value):
            targets = [node.value.partition(":")[0]]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, one level up per extra dot
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (built on first use: only the worker running these tests pays)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _floor(name: str) -> int | None:
    parts = name.split(".")
    if parts[0] != "scanner" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def test_no_import_cycles_not_even_inside_functions() -> None:
    assert _cycles(graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_run_down_the_floors() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if (a := _floor(name)) is not None and (b := _floor(target)) is not None and b > a
    )
    assert upward == []


def test_every_function_named_for_later_exists() -> None:
    """A `"module:name"` imported on first use (a document kind's parser, Faust's table class) names a
    module and a function or class it defines."""
    named = {node.value for path in MODULES.values() for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and _LAZY.fullmatch(node.value)}
    assert "scanner.readers.settings.parsers:parse_omnibus" in named
    missing = []
    for target in sorted(named):
        module, _, function = target.partition(":")
        tree = ast.parse(MODULES[module].read_text()) if module in MODULES else None
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} if tree else set()
        if function not in defined:
            missing.append(target)
    assert missing == []


def test_every_scanner_module_has_a_floor() -> None:
    homeless = [n for n in MODULES if n.startswith("scanner.") and _floor(n) is None]
    assert homeless == []


# Run in a fresh interpreter that imports no project module itself: each module is imported in a
# child forked from it, so it meets an empty cache of project modules, as it would alone. The parent
# first imports the other libraries the project imports (those that are installed): a child then
# pays only for the project's own modules, and a project module that lacks an import still fails.
_ALONE = """
import gc, os, sys, traceback
libraries, modules = sys.argv[1].split(), sys.argv[2:]
for library in libraries:
    try:
        __import__(library)
    except Exception:
        pass  # not installed here, or not importable first: the child that needs it reports it
# no collection in the children (each only imports), and none of them touching the parent's objects
gc.disable()
gc.freeze()
bad = []
for name in modules:
    pid = os.fork()
    if pid == 0:
        try:
            __import__(name)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        bad.append(name)
print("\\n".join(bad))
"""


def _libraries() -> list[str]:
    """Every module outside the project that a project module imports (anywhere in it)."""
    found: set[str] = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                     else [])
            found.update(n for n in names if n.split(".")[0] not in PACKAGES)
    return sorted(found)


@pytest.mark.slow
def test_every_module_imports_alone() -> None:
    done = subprocess.run([sys.executable, "-c", _ALONE, " ".join(_libraries()), *sorted(MODULES)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], done.stderr[-3000:]


def test_the_import_check_finds_a_module_that_does_not_import_alone(tmp_path: Path) -> None:
    """A module that works only after another imported what it uses: the child importing it alone fails."""
    (tmp_path / "first.py").write_text("import json\nimport second\n")
    (tmp_path / "second.py").write_text("VALUE = json.dumps(1)\n")  # uses `json` without importing it
    done = subprocess.run([sys.executable, "-c", _ALONE, "json", "first", "second"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert done.stdout.split() == ["first", "second"]


@pytest.mark.parametrize("name", ["scanner.rules.table", "scanner.rules.documents", "scanner.cli"])
def test_the_graph_sees_the_imports_it_must(name: str) -> None:
    """The checks above are only as good as the graph: a few arrows that must be in it (the readers
    a document kind names to import on first use among them)."""
    expected = {
        "scanner.rules.table": {"scanner.rules.template_include", "scanner.rules.any_of", "scanner.rules.spec"},
        "scanner.rules.documents": {"scanner.rules.facets", "scanner.readers.settings.parsers",
                                    "scanner.readers.api.python.extract"},
        "scanner.cli": {"scanner.commands.scan"},
    }[name]
    assert expected <= graph()[name]

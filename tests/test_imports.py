"""The import graph of ``src/regrow``, read from the source: no cycle, and every module imports cleanly.

Every import counts as an edge — at the top of a module, inside a function (a lazy import), or under
``if TYPE_CHECKING`` — because each is a dependency a reader has to follow. Like pytest's own
``testing/test_meta.py``, every module is imported in a fresh interpreter with warnings as errors.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import regrow

PACKAGE = Path(regrow.__file__).parent
NOT_IMPORTED = {"regrow.__main__"}  # runs the command when imported


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that module ``name`` imports, anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[:len(package) - node.level + 1], node.module or ""]).strip(".") \
                if node.level else node.module or ""
            for alias in node.names:
                edges.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {edge for edge in edges if edge in known and edge != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_graph_is_read_from_every_kind_of_import() -> None:
    edges = graph()
    assert "regrow._store" in edges["regrow._proposers._cache"]  # from ._store import ...
    assert "regrow._delivery._keep" in edges["regrow._cli._deliver"]  # from . import _delivery as delivery
    assert "regrow._server" not in edges and "regrow._sandbox._server" in edges["regrow._sandbox._fork"]  # lazy
    assert "regrow._result" in edges["regrow._stores._base"]  # under TYPE_CHECKING
    assert "regrow._sandbox._process" in edges["regrow._sandbox._warm"]  # from .._sandbox._process import ...


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_the_package_s_public_face() -> None:
    # `from . import __version__` inside the package was the back-arrow of most modules: the face sits on top.
    importers = sorted(name for name, edges in graph().items() if "regrow" in edges)
    assert importers == [], importers


def test_every_module_imports_with_warnings_as_errors() -> None:
    names = sorted(set(modules()) - NOT_IMPORTED)
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-W", "error", "-c", code, *names], capture_output=True, text=True,
                          timeout=300, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr

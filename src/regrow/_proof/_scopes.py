"""Which names a function's body binds itself, scope by scope (for the capability check).

A name a scope binds (an argument, an assignment, an import, a ``def``, a ``for`` or ``with``
target, an ``except`` name, a ``match`` capture, a walrus) is local; a name no enclosing scope of
the function binds is read from the module's globals or the builtins.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)  # fmt: skip


def own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a scope's body, not descending into the scopes nested in it."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def bindings(body: list[ast.stmt]) -> set[str]:
    """The names a scope's body binds (assignment, import, def, for, with, except, match, walrus)."""
    bound: set[str] = set()
    for node in own_nodes(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # a walrus in a comprehension binds in the function around it
            bound.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
        elif isinstance(node, ast.Nonlocal):
            bound.update(node.names)
    return bound


MISSING = object()  # a name not in a namespace (None is a value)


def constant(node: ast.expr) -> str | None:
    """The string a node spells, if it is a string literal."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def reached(key: str, chains: list[str]) -> bool:
    """A dotted chain the original already holds, or one it reaches through (``os.path`` -> ``os.path.x``)."""
    if not key.startswith("chain:"):
        return False
    dotted = key.removeprefix("chain:")
    return any("." in held and (dotted == held or dotted.startswith(held + ".")) for held in chains)

"""Handlers that can catch the sandbox's limits, refused in a candidate (see :mod:`._capabilities`).

The fork sandbox limits a call's memory and its stack; your process does not, or not alike. A candidate that
catches the ``MemoryError`` of an allocation over the limit, or the ``RecursionError`` of a recursion that runs until
it fails, can tell the two apart: a red team's returned right answers in the sandbox and -1.0 on every call in the
host. So a candidate may hold no handler that can catch either, unless its original has the same one.
"""

from __future__ import annotations

import ast
import builtins
import sys
import types
from collections.abc import Iterator
from typing import Any


def broad_handlers(function: ast.AST, namespace: Any) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for each handler (``except``, ``contextlib.suppress``, a class's ``__exit__``) that may catch
    a ``MemoryError`` or a ``RecursionError``: the sandbox's limits — an allocation over its memory limit, a
    recursion deeper than its stack allows — which your process does not hit alike, so the fix could tell the two
    apart. A handler names its exceptions plainly (a builtin's name or one of your module's classes), or is refused."""
    for node in ast.walk(function):
        caught: list[ast.expr | None] = []
        if isinstance(node, ast.ExceptHandler):
            caught = [*node.type.elts] if isinstance(node.type, ast.Tuple) else [node.type]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "suppress":
            caught = list(node.args)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__exit__", "__aexit__"):
            yield "broad:__exit__", "a class with its own __exit__ (it may swallow any exception, the sandbox's " \
                                    "memory and stack limits included)"
        for kind in caught:
            value = _exception_class(kind, namespace, builtins)
            plain = isinstance(value, type) and issubclass(value, BaseException)
            if kind is None or not plain or issubclass(MemoryError, value) or issubclass(RecursionError, value):  # type: ignore[arg-type]
                shown = "every exception" if kind is None else ast.unparse(kind)[:40]
                yield f"broad:{shown}", f"a handler of {shown} (it may catch the sandbox's memory and stack limits, " \
                                        f"which your process does not hit alike)"


def _exception_class(kind: ast.expr | None, namespace: Any, builtins: Any) -> object:
    """The class a handler names: a builtin, one of your module's globals, or an attribute of a module already
    imported (``json.JSONDecodeError``: looked up in ``sys.modules``, never imported here)."""
    if isinstance(kind, ast.Name):
        return namespace.get(kind.id, getattr(builtins, kind.id, None))
    parts: list[str] = []
    while isinstance(kind, ast.Attribute):
        parts.insert(0, kind.attr)
        kind = kind.value
    if not isinstance(kind, ast.Name) or not parts:
        return None
    base = namespace.get(kind.id)
    value = base if isinstance(base, types.ModuleType) else sys.modules.get(kind.id)
    for part in parts:
        value = getattr(value, part, None) if isinstance(value, types.ModuleType) or part == parts[-1] else None
    return value



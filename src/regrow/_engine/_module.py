"""What the target's module offers beside the function: sibling functions and classes, constants, literals.

Bugs often name the wrong one of several similar module-level helpers (``_padleft`` for ``_padboth``)
or write a literal where a module constant was meant; the operators of :mod:`._names` draw on this.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import types
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._target import Target

Literal = int | float | str
_MAX_SOURCE = 400_000  # characters of module source read for literals; larger modules are skipped
_MAX_LITERALS = 12


@dataclasses.dataclass
class Module:
    """Facts about the module a function lives in; empty where it is not known."""

    functions: list[str] = dataclasses.field(default_factory=list)  # defined in the module, in order
    classes: list[str] = dataclasses.field(default_factory=list)  # defined in the module, in order
    exceptions: list[str] = dataclasses.field(default_factory=list)  # those classes that are exceptions
    constants: dict[str, Literal] = dataclasses.field(default_factory=dict)  # UPPER_CASE names bound to literals
    literals: list[Literal] = dataclasses.field(default_factory=list)  # written in the module, most frequent first

    @classmethod
    def of(cls, target: Target) -> Module:
        """The module of ``target``: its globals for names, its source file for literals."""
        namespace = target.func.__globals__
        return cls(*_definitions(namespace, target.module, target.name), _constants(namespace),
                   _literals(target.filename))


def _definitions(namespace: dict[str, Any], module: str, own: str) -> tuple[list[str], list[str], list[str]]:
    functions, classes, exceptions = [], [], []
    for name, value in list(namespace.items()):
        try:
            home = getattr(value, "__module__", None)  # a proxy may raise anything here
        except Exception:
            continue
        if name.startswith("__") or name == own or home != module:
            continue
        if isinstance(value, types.FunctionType):
            functions.append(name)
        elif isinstance(value, type):
            classes.append(name)
            if issubclass(value, BaseException):
                exceptions.append(name)
    return functions, classes, exceptions


def _constants(namespace: dict[str, Any]) -> dict[str, Literal]:
    return {name: value for name, value in namespace.items()
            if name.isupper() and not name.startswith("_") and type(value) in (int, float, str)}


def _literals(filename: str) -> list[Literal]:
    """Numbers and strings written in the module's source (docstrings left out), most frequent first."""
    text = "".join(linecache.getlines(filename))
    if not text or len(text) > _MAX_SOURCE:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    docstrings |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    counts: Counter[tuple[type, Literal]] = Counter()
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) and id(node) not in docstrings else None
        if isinstance(value, (int, float, str)) and not isinstance(value, bool) and len(str(value)) <= 40:
            counts[type(value), value] += 1
    return [value for (_, value), _ in counts.most_common(_MAX_LITERALS)]

"""Tier 1, value edits: a sign, a constant for another constant, a name from the module for another.

Each is one token of the fix a reviewer would write: ``-x`` for ``x`` (never ``abs``), ``% 100`` for
``% 10``, ``len(xs)`` for ``0``, ``_padboth`` for ``_padleft``, ``DEFAULT_PORT`` for ``80``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from ._core import _constant_edits, _identity
from ._edits import Operator, Replacement, call, is_value, load
from ._scope import Scope, Site

_MAX_DONORS = 6  # constants of the function and the module tried at one literal
_MAX_NAMES = 8  # module names tried at one name
# Builtins of one kind, which one bug may write for another (callees are SiblingSwap's).
_KINDS: Sequence[Sequence[str]] = (
    ("ValueError", "TypeError", "KeyError", "IndexError", "LookupError", "AttributeError", "ZeroDivisionError",
     "ArithmeticError", "OverflowError", "RuntimeError", "NotImplementedError", "StopIteration", "OSError",
     "FileNotFoundError", "UnicodeError", "Exception"),
    ("int", "float", "str", "bool", "bytes", "list", "tuple", "set", "frozenset", "dict"),
    ("len", "abs", "str", "int", "float", "ord", "repr", "bool", "sorted", "reversed", "sum", "min", "max"),
)


class UnaryMinus:
    """``-x`` → ``x`` and ``x`` → ``-x`` for a value: returned, assigned, compared, an argument or an element."""

    name, tier, prior = "sign", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            yield node.operand
        elif isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp)) and _signable(site) \
                and not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
            yield ast.UnaryOp(ast.USub(), node)  # ``-(a * b)`` is ``-a * b``, made at ``a``


def _signable(site: Site) -> bool:
    if isinstance(getattr(site.node, "ctx", None), (ast.Store, ast.Del)) or isinstance(site.parent, ast.UnaryOp):
        return False
    if site.field == "func" or (isinstance(site.node, ast.Call) and _is_named(site.node, "abs")):
        return False
    parent = site.parent
    return is_value(site) or (isinstance(parent, (ast.Tuple, ast.List)) and site.field == "elts") or (
        isinstance(parent, ast.Call) and site.field == "args" and not _is_named(parent, "range")) or (
        isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div, ast.FloorDiv)))


def _is_named(node: ast.Call, name: str) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == name


class ConstantSwap:
    """A literal replaced by another literal of the function or the module, by a scale change (``10`` ↔
    ``100``), by its negation, or ``0`` ↔ ``len(xs)``."""

    name, tier, prior = "constant-swap", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Call) and _is_named(node, "len") and len(node.args) == 1 and is_value(site):
            yield ast.Constant(0)
            return
        if not isinstance(node, ast.Constant) or isinstance(site.parent, ast.JoinedStr):
            return
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or _is_docstring(site):
            return
        op = getattr(site.parent, "op", None) if site.field in ("right", "value") else None
        done = {ast.dump(c) for c in [*_constant_edits(value), ast.Constant(value)]}  # ConstantTweak's, and itself
        for new in [*_donors(value, scope), *_scaled(value, site)]:
            if ast.dump(new) in done or (op is not None and isinstance(new, ast.Constant) and _identity(type(op), new)):
                continue
            done.add(ast.dump(new))
            yield new
        if type(value) is int and value == 0:
            for seq in scope.sequences[:3]:
                yield call("len", load(seq))


def _is_docstring(site: Site) -> bool:
    return isinstance(site.parent, ast.Expr)


def _donors(value: int | float | str, scope: Scope) -> Iterator[ast.expr]:
    """Other literals of the same type: the function's own first, then the module's most frequent."""
    named = set(scope.module.constants.values())  # those come by name (ModuleName): ``DEFAULT_PORT``, not ``8080``
    module = [v for v in scope.module.literals if v not in named]
    same = [v for v in [*scope.constants, *module] if type(v) is type(value) and v != value]
    for other in list(dict.fromkeys(same))[:_MAX_DONORS]:
        yield _literal(other)


def _scaled(value: int | float | str, site: Site) -> Iterator[ast.expr]:
    """``10`` ↔ ``100`` where a literal scales (a factor, a divisor, a modulus, a threshold), and ``1`` ↔ ``-1``
    where it stands alone (a sign in a sum is BinaryOp's ``+`` ↔ ``-``)."""
    if type(value) is not int or value == 0:
        return
    parent = site.parent
    scales = (isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod))) \
        or isinstance(parent, ast.Compare)
    if scales and value != 1:
        yield ast.Constant(value * 10)
        if value % 10 == 0:
            yield ast.Constant(value // 10)
    if value > 0 and not isinstance(parent, (ast.UnaryOp, ast.BinOp)):
        yield ast.UnaryOp(ast.USub(), ast.Constant(value))


def _literal(value: int | float | str) -> ast.expr:
    """A literal as the parser would make it: a negative number is a minus before a positive one."""
    if not isinstance(value, str) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


class ModuleName:
    """A name replaced by another one of the module — a sibling function, a class, a constant for a
    constant or a literal — or a builtin by one of its kind (``TypeError`` → ``ValueError``)."""

    name, tier, prior = "module-name", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node, module = site.node, scope.module
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, str) and not _is_docstring(site) \
                and not isinstance(site.parent, ast.JoinedStr):
            for name, value in module.constants.items():
                if type(value) is type(node.value) and value != node.value:
                    yield load(name)
            return
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in scope.variables:
            return
        for other in _kin(node.id, scope, callee=site.field == "func")[:_MAX_NAMES]:
            yield load(other)


def _kin(name: str, scope: Scope, callee: bool) -> list[str]:
    """Names of the same kind as ``name``, the module's first (most alike ``name`` first): functions,
    exceptions, classes, constants; then builtins of its kind (callees only exceptions: SiblingSwap
    has the rest), functions before types where a value is passed (``key=str`` → ``key=len``)."""
    module = scope.module
    kinds = [_KINDS[0]] if callee else [_KINDS[0], _KINDS[2], _KINDS[1]]
    builtin = [other for group in kinds if name in group for other in group]
    if name in module.exceptions or name in _KINDS[0]:
        pool = _similar(name, module.exceptions) + _similar(name, builtin)
    elif name in module.functions:
        pool = _similar(name, module.functions)
    elif name in module.classes:
        pool = _similar(name, module.classes)
    elif name in module.constants:
        pool = _similar(name, [c for c, v in module.constants.items() if type(v) is type(module.constants[name])])
    else:
        pool = builtin
    return [other for other in dict.fromkeys(pool) if other != name]


def _similar(name: str, names: Sequence[str]) -> list[str]:
    """``names`` most alike ``name`` first (the longest common prefix and suffix), else in their order."""
    def common(a: str, b: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    return sorted(names, key=lambda other: -(common(name, other) + common(name[::-1], other[::-1])))


VALUES: list[Operator] = [UnaryMinus(), ConstantSwap(), ModuleName()]

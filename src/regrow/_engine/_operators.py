"""Mutation operators: small strategy objects that propose replacements for one node.

Each operator looks at one :class:`Site` and yields replacement nodes (for an expression) or
lists of statements (for a statement; an empty list deletes it). ``tier`` orders families (1 core
mutations, 2 fix templates, 3 expression copy, 4 statement edits); ``prior`` orders operators
inside a tier, lower first. Add an operator by writing a class and listing it in ``OPERATORS``.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence
from typing import Protocol

from ._scope import Scope, Site

Replacement = ast.expr | list[ast.stmt]

_CMP_SWAPS: dict[type[ast.cmpop], Sequence[type[ast.cmpop]]] = {
    ast.Lt: (ast.LtE, ast.Gt, ast.GtE, ast.NotEq, ast.Eq),
    ast.LtE: (ast.Lt, ast.GtE, ast.Gt, ast.Eq, ast.NotEq),
    ast.Gt: (ast.GtE, ast.Lt, ast.LtE, ast.NotEq, ast.Eq),
    ast.GtE: (ast.Gt, ast.LtE, ast.Lt, ast.Eq, ast.NotEq),
    ast.Eq: (ast.NotEq, ast.LtE, ast.GtE, ast.Lt, ast.Gt),
    ast.NotEq: (ast.Eq, ast.Lt, ast.Gt),
    ast.Is: (ast.IsNot, ast.Eq),
    ast.IsNot: (ast.Is, ast.NotEq),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_ARITH: Sequence[type[ast.operator]] = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div, ast.Mod, ast.Pow)
_BITS: Sequence[type[ast.operator]] = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
_RETURN_LITERALS: Sequence[str | int | float | bool | None] = (None, 0, 1, -1, True, False, "", 0.0)


class Operator(Protocol):
    name: str
    tier: int
    prior: int

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]: ...


def _with(node: ast.AST, **fields: object) -> ast.AST:
    new = copy.copy(node)
    for key, value in fields.items():
        setattr(new, key, value)
    return new


def _plus(expr: ast.expr, delta: int) -> ast.expr:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return ast.Constant(expr.value + delta)
    op: ast.operator = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(expr, op, ast.Constant(abs(delta)))


class CompareOp:
    name, tier, prior = "compare-op", 1, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Compare):
            return
        for i, op in enumerate(node.ops):
            for other in _CMP_SWAPS.get(type(op), ()):
                ops = list(node.ops)
                ops[i] = other()
                yield _with(node, ops=ops)  # type: ignore[misc]


class BinaryOp:
    name, tier, prior = "binary-op", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.BinOp):
            return
        group = _ARITH if type(node.op) in _ARITH else _BITS
        for other in group:
            if other is not type(node.op):
                yield _with(node, op=other())  # type: ignore[misc]


class AugAssignOp:
    name, tier, prior = "augassign-op", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.AugAssign):
            return
        group = _ARITH if type(node.op) in _ARITH else _BITS
        for other in group:
            if other is not type(node.op):
                yield [_with(node, op=other())]  # type: ignore[list-item]
        yield [ast.Assign(targets=[copy.copy(node.target)], value=node.value, lineno=node.lineno)]


class BoolOpSwap:
    name, tier, prior = "bool-op", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.BoolOp):
            yield _with(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())  # type: ignore[misc]


class ConstantTweak:
    name, tier, prior = "constant", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Constant) or isinstance(site.parent, ast.JoinedStr):
            return
        value = node.value
        if isinstance(value, bool):
            yield ast.Constant(not value)
        elif type(value) is int:
            for other in dict.fromkeys((value + 1, value - 1, 1 if value == 0 else 0 if value == 1 else value)):
                if other != value:
                    yield ast.Constant(other)


class NameSwap:
    name, tier, prior = "name", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id not in scope.variables:
            return
        for other in scope.variables:
            if other != node.id:
                yield ast.Name(other, ast.Load())


class SwapArguments:
    name, tier, prior = "swap-args", 1, 5

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return
        count = len(node.args)
        for i in range(count):
            for j in range(i + 1, count):
                args = list(node.args)
                args[i], args[j] = args[j], args[i]
                yield _with(node, args=args)  # type: ignore[misc]


class BoundShift:
    """±1 on ``range(...)`` arguments, slice bounds and subscript indices."""

    name, tier, prior = "bound", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        is_range_arg = (
            isinstance(site.parent, ast.Call)
            and isinstance(site.parent.func, ast.Name)
            and site.parent.func.id == "range"
            and site.field == "args"
        )
        is_bound = isinstance(site.parent, ast.Slice) or (
            isinstance(site.parent, ast.Subscript) and site.field == "slice" and not isinstance(node, ast.Slice)
        )
        if not isinstance(node, ast.expr) or not (is_range_arg or is_bound):
            return
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return  # ConstantTweak covers literal bounds
        yield _plus(node, 1)
        yield _plus(node, -1)


class ReturnLiteral:
    name, tier, prior = "return-literal", 2, 9

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Return):
            return
        current = node.value.value if isinstance(node.value, ast.Constant) else object()
        for literal in _RETURN_LITERALS:
            if literal is not current and not (type(literal) is type(current) and literal == current):
                yield [ast.Return(ast.Constant(literal), lineno=node.lineno)]


OPERATORS: list[Operator] = [
    CompareOp(), BinaryOp(), AugAssignOp(), BoolOpSwap(), ConstantTweak(), NameSwap(), SwapArguments(),
    BoundShift(), ReturnLiteral(),
]
"""The operators the engine uses, in no particular order (the search ranks them)."""

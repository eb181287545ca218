"""Tier 2, fix templates: the shapes human fixes often take — a guard, a clamp, a slice, a term."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from ._edits import Operator, Replacement, call, in_condition, is_passed_count, is_value, load, names_in
from ._scope import Scope, Site

_RETURN_LITERALS: Sequence[str | int | float | None] = (None, 0, 1, -1, True, False, "", 0.0)
_COMPARISONS: Sequence[type[ast.cmpop]] = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Where an iterable is consumed whole, so ``x[1:]`` could be the missing skip.
_CONSUMERS = frozenset({"sum", "len", "sorted", "list", "set", "tuple", "enumerate", "zip", "min", "max", "any",
                        "all", "reversed", "join"})


def _arithmetic(node: ast.AST) -> bool:
    """Whether ``node`` may be a number worth clamping, squaring or adding to: not a literal (``abs(-1)`` is
    ``1``), a collection, a string or a condition."""
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not) and _arithmetic(node.operand)
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp))


def _related(node: ast.AST, scope: Scope) -> list[str]:
    """The variables a template may draw on: those ``node`` uses first, then the rest."""
    used = [name for name in names_in(node) if name in scope.variables]
    return used + [name for name in scope.variables if name not in used]


class GuardClause:
    """``c`` → ``c or x is None``, ``x is not None and c``, ``c or not x``, ``not x or c``, ``c and x``."""

    name, tier, prior = "guard", 2, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.expr) or not in_condition(site):
            return
        for var in _related(node, scope):
            x = load(var)
            yield ast.BoolOp(ast.Or(), [node, ast.Compare(x, [ast.Is()], [ast.Constant(None)])])
            yield ast.BoolOp(ast.And(), [ast.Compare(x, [ast.IsNot()], [ast.Constant(None)]), node])
            yield ast.BoolOp(ast.Or(), [node, ast.UnaryOp(ast.Not(), x)])
            yield ast.BoolOp(ast.Or(), [ast.UnaryOp(ast.Not(), x), node])
            yield ast.BoolOp(ast.And(), [node, x])
            yield ast.BoolOp(ast.And(), [x, node])


class NegateCondition:
    name, tier, prior = "negate", 2, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if isinstance(site.node, ast.expr) and in_condition(site):
            yield ast.UnaryOp(ast.Not(), site.node)


class Clamp:
    """``e`` → ``max(0, e)``, ``min(e, bound)`` for a value ``e`` and a variable ``bound``."""

    name, tier, prior = "clamp", 2, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.expr) or not is_value(site) or not _arithmetic(node):
            return
        yield call("max", ast.Constant(0), node)
        for bound in _related(node, scope):
            if bound not in names_in(node):
                yield call("min", node, load(bound))
                yield call("max", node, load(bound))


class SliceIterable:
    """``x`` → ``x[1:]``, ``x[:-1]``, ``x[::-1]``, ``x[k:]``, ``x[:k]`` where ``x`` is iterated or consumed."""

    name, tier, prior = "slice", 2, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or not _iterated(site):
            return
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return
        # Not in ``len()``: ``len(x[1:])`` is ``len(x) - 1`` but on an empty ``x`` (the off-by-one operator's, where
        # it differs only in keeping a crash of the original: ``len(xs[1:]) + 1`` beside ``len(xs)``), and
        # ``len(x[::-1])`` is ``len(x)``. ``len(s[:n])``, the smaller of two, stays.
        for lower, upper, step in () if _measured(site) else ((1, None, None), (None, -1, None), (None, None, -1)):
            yield _slice(node, *(None if v is None else ast.Constant(v) for v in (lower, upper, step)))
        for var in scope.variables:
            if var not in names_in(node):
                yield _slice(node, load(var), None, None)
                yield _slice(node, None, load(var), None)


def _iterated(site: Site) -> bool:
    parent = site.parent
    if site.field == "iter" and isinstance(parent, (ast.For, ast.comprehension)):
        return True
    if isinstance(parent, ast.Return):
        return True
    if isinstance(parent, ast.Call) and site.field == "args":
        func = parent.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in _CONSUMERS
    return False


def _measured(site: Site) -> bool:
    parent = site.parent
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len"


def _slice(node: ast.expr, lower: ast.expr | None, upper: ast.expr | None, step: ast.expr | None) -> ast.expr:
    return ast.Subscript(node, ast.Slice(lower, upper, step), ast.Load())


class AddTerm:
    """``e`` → ``e + v``, ``e - v`` for a variable ``v`` in scope, where ``e`` is a value stored, returned or
    compared, or a count passed on to the user's own code (``Bits(v << n, self.len + n)``)."""

    name, tier, prior = "add-term", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        numeric = isinstance(node, ast.Constant) and type(node.value) in (int, float)
        if not isinstance(node, ast.expr) or not (is_value(site) or is_passed_count(site)) or \
                not (numeric or _arithmetic(node)):
            return
        for var in _related(node, scope):
            if var not in names_in(node):
                yield ast.BinOp(node, ast.Add(), load(var))
                yield ast.BinOp(node, ast.Sub(), load(var))


class SquareOrAbs:
    name, tier, prior = "square-abs", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.expr) and is_value(site) and _arithmetic(node):
            yield call("abs", node)
            yield ast.BinOp(node, ast.Pow(), ast.Constant(2))


class BoolReturnComparison:
    """``return True`` → ``return a < b`` (and the other comparisons) over variables in scope."""

    name, tier, prior = "bool-return", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not (isinstance(node, ast.Return) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, bool)):
            return
        for var in scope.variables:
            yield [ast.Return(load(var))]
            yield [ast.Return(ast.UnaryOp(ast.Not(), load(var)))]
        for a in scope.variables:
            for b in scope.variables:
                if a != b:
                    for op in _COMPARISONS:
                        yield [ast.Return(ast.Compare(load(a), [op()], [load(b)]))]


class ConcatReturn:
    """``return e`` → ``return e + v``, ``v + e``, ``e + [v]``, ``[v] + e``."""

    name, tier, prior = "concat-return", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Return) or node.value is None or isinstance(node.value, ast.Constant):
            return
        value = node.value
        for var in scope.variables:
            if var not in names_in(value):
                x = load(var)
                yield [ast.Return(ast.BinOp(value, ast.Add(), x))]
                yield [ast.Return(ast.BinOp(x, ast.Add(), value))]
                yield [ast.Return(ast.BinOp(value, ast.Add(), ast.List([x], ast.Load())))]
                yield [ast.Return(ast.BinOp(ast.List([x], ast.Load()), ast.Add(), value))]


class ReturnLiteral:
    name, tier, prior = "return-literal", 2, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Return):
            return
        current = node.value.value if isinstance(node.value, ast.Constant) else object()
        for literal in _RETURN_LITERALS:
            if literal is not current and not (type(literal) is type(current) and literal == current):
                yield [ast.Return(ast.Constant(literal))]


class BaseCase:
    """A recursion's base case that returns a literal where it meant what it was called with: under ``if n <
    10:``, ``return 0`` → ``return n``, ``return []`` → ``return [n]``; under ``if len(xs) == 1:``, ``return
    xs[0]``. Only in a function that calls itself, only for the parameters its condition reads."""

    name, tier, prior = "base-case", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node, parent = site.node, site.parent
        if not isinstance(node, ast.Return) or not isinstance(parent, ast.If) or site.field != "body" or \
                not isinstance(node.value, (ast.Constant, ast.List, ast.Tuple)) or not _recursive(scope):
            return
        empty = isinstance(node.value, (ast.List, ast.Tuple)) and not node.value.elts
        if isinstance(node.value, (ast.List, ast.Tuple)) and not empty:
            return
        read = set(names_in(parent.test))
        measured = {arg.id for test in ast.walk(parent.test) if isinstance(test, ast.Call)
                    and isinstance(test.func, ast.Name) and test.func.id == "len" and len(test.args) == 1
                    for arg in test.args if isinstance(arg, ast.Name)}
        for param in scope.params:
            if param not in read or param in ("self", "cls"):
                continue
            if param in measured:
                yield [ast.Return(ast.Subscript(load(param), ast.Constant(0), ast.Load()))]
            elif empty:
                made: list[ast.expr] = [load(param)]
                yield [ast.Return(ast.List(made, ast.Load()) if isinstance(node.value, ast.List) else
                                  ast.Tuple(made, ast.Load()))]
            else:
                yield [ast.Return(load(param))]


def _recursive(scope: Scope) -> bool:
    """Whether the function calls itself (by its name, or as a method of ``self`` or ``cls``)."""
    name = scope.function.name
    for node in ast.walk(scope.function):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                    isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Name)
                    and func.value.id in ("self", "cls")):
                return True
    return False


TEMPLATES: list[Operator] = [
    GuardClause(), NegateCondition(), Clamp(), SliceIterable(), AddTerm(), SquareOrAbs(), BoolReturnComparison(),
    ConcatReturn(), ReturnLiteral(), BaseCase(),
]

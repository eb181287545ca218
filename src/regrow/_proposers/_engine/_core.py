"""Tier 1, core mutations: change one token — an operator, a constant, a name — or drop or swap a part."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence

from ._edits import Operator, Replacement, in_condition, is_passed_count, is_value, load, plus, with_fields
from ._scope import Scope, Site

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
# Operators where ``a op b`` and ``b op a`` differ (``+`` too: strings and lists concatenate).
_ORDERED = (ast.Add, ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
# Builtins and methods that are easily confused with each other.
_SIBLINGS: Sequence[Sequence[str]] = (
    ("min", "max"), ("any", "all"), ("sorted", "reversed", "iter"), ("sum", "len"), ("int", "float", "round"),
    ("list", "set", "tuple"), ("append", "extend"), ("add", "update", "discard"), ("remove", "discard"),
    ("strip", "lstrip", "rstrip"), ("startswith", "endswith"), ("find", "rfind"), ("index", "rindex"),
    ("split", "rsplit"), ("lower", "upper", "title", "capitalize"), ("keys", "values", "items"),
    ("ljust", "rjust", "center"), ("isdigit", "isalpha", "isalnum", "isspace"), ("floor", "ceil"),
    ("get", "setdefault", "pop"), ("pop", "popleft"), ("insert", "append"),
)


def _sibling_table(groups: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """Each name's siblings, in order; a name in several groups gets all of them."""
    table: dict[str, list[str]] = {}
    for group in groups:
        for name in group:
            known = table.setdefault(name, [])
            known.extend(other for other in group if other != name and other not in known)
    return table


_SIBLING_OF = _sibling_table(_SIBLINGS)


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
                yield with_fields(node, ops=ops)  # type: ignore[misc]


def _identity(op: type[ast.operator], operand: ast.expr) -> bool:
    """Whether ``x op operand`` is just ``x`` (``+ 0``, ``* 1``…): a deletion in disguise, found as one elsewhere."""
    if not isinstance(operand, ast.Constant) or type(operand.value) not in (int, float):
        return False
    zero = (ast.Add, ast.Sub, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
    one = (ast.Mult, ast.Div, ast.FloorDiv, ast.Pow)
    return (operand.value == 0 and issubclass(op, zero)) or (operand.value == 1 and issubclass(op, one))


def _swap_op(node: ast.BinOp | ast.AugAssign) -> Iterator[ast.operator]:
    group = _ARITH if type(node.op) in _ARITH else _BITS
    operand = node.right if isinstance(node, ast.BinOp) else node.value
    negated = isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.USub)
    for other in group:  # ``x - -y`` is a sign dropped (UnaryMinus's), never a double negation
        doubled = negated and other in (ast.Add, ast.Sub)
        if other is not type(node.op) and not _identity(other, operand) and not doubled:
            yield other()


class BinaryOp:
    name, tier, prior = "binary-op", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if isinstance(site.node, ast.BinOp):
            for op in _swap_op(site.node):
                yield with_fields(site.node, op=op)  # type: ignore[misc]


class AugAssignOp:
    name, tier, prior = "augassign-op", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.AugAssign):
            return
        for op in _swap_op(node):
            yield [with_fields(node, op=op)]  # type: ignore[list-item]
        yield [ast.Assign(targets=[copy.copy(node.target)], value=node.value, lineno=node.lineno)]
        yield []  # the update should not happen at all


class BoolOpSwap:
    name, tier, prior = "bool-op", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.BoolOp):
            yield with_fields(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())  # type: ignore[misc]


class NotToggle:
    """Remove a ``not``, or put one in front of a condition."""

    name, tier, prior = "not", 1, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node.operand
        elif isinstance(node, ast.expr) and (
            in_condition(site) or isinstance(site.parent, ast.BoolOp)
            or (isinstance(site.parent, ast.Return) and isinstance(node, (ast.Compare, ast.BoolOp, ast.Call)))
        ):
            yield ast.UnaryOp(ast.Not(), node)


class ConstantTweak:
    """Literals: ±1, ``0``↔``1``, ``True``↔``False``, ``[]``↔``[[]]``, a literal made empty."""

    name, tier, prior = "constant", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(site.parent, ast.JoinedStr):
            return
        if isinstance(node, ast.Constant):
            op = getattr(site.parent, "op", None) if site.field in ("right", "value") else None
            for new in _constant_edits(node.value):
                if op is None or not _identity(type(op), new):
                    yield new
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and isinstance(getattr(node, "ctx", None),
                                                                                       (ast.Load, type(None))):
            if isinstance(node, ast.List) and not node.elts:
                yield ast.List([ast.List([], ast.Load())], ast.Load())
            elif isinstance(node, ast.List) and len(node.elts) == 1 and _is_empty_list(node.elts[0]):
                yield ast.List([], ast.Load())
            if isinstance(node, ast.Dict) and node.keys:
                yield ast.Dict([], [])
            elif isinstance(node, (ast.List, ast.Tuple)) and node.elts:
                yield type(node)([], ast.Load())


def _is_empty_list(node: ast.expr) -> bool:
    return isinstance(node, ast.List) and not node.elts


def _constant_edits(value: object) -> Iterator[ast.Constant]:
    if isinstance(value, bool):
        yield ast.Constant(not value)
    elif type(value) is int:
        for other in dict.fromkeys((value + 1, value - 1, 1 if value == 0 else 0 if value == 1 else value)):
            if other != value:
                yield ast.Constant(other)
    elif type(value) is float:
        yield ast.Constant(value + 1)
        yield ast.Constant(value - 1)
    elif isinstance(value, str):
        if value:
            yield ast.Constant("")
        if value != " ":
            yield ast.Constant(" ")


class NameSwap:
    """Replace a variable with another variable of the function."""

    name, tier, prior = "name", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id not in scope.variables:
            return
        for other in scope.variables:
            if other != node.id:
                yield load(other)


class AttributeSwap:
    """Replace an attribute or method name with another one the function uses."""

    name, tier, prior = "attribute", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            for other in scope.attributes:
                if other != node.attr:
                    yield with_fields(node, attr=other)  # type: ignore[misc]


class SiblingSwap:
    """``min``↔``max``, ``any``↔``all``, ``append``↔``extend``, ``lstrip``↔``rstrip`` and friends."""

    name, tier, prior = "sibling", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not (isinstance(site.parent, ast.Call) and site.field == "func"):
            return
        if isinstance(node, ast.Name):
            for other in _SIBLING_OF.get(node.id, ()):
                yield load(other)
        elif isinstance(node, ast.Attribute):
            for other in _SIBLING_OF.get(node.attr, ()):
                yield with_fields(node, attr=other)  # type: ignore[misc]


class SwapOperands:
    """Swap the two sides of an ordered binary operation or a comparison, tuple elements, or the
    two indices of ``a[i][j]``."""

    name, tier, prior = "swap", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ORDERED):
            yield ast.BinOp(node.right, node.op, node.left)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            yield ast.Compare(node.comparators[0], node.ops, [node.left])
        elif isinstance(node, ast.Tuple):
            for i, j in _pairs(len(node.elts)):
                elts = list(node.elts)
                elts[i], elts[j] = elts[j], elts[i]
                yield ast.Tuple(elts, node.ctx)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript):
            inner = node.value
            if not isinstance(node.slice, ast.Slice) and not isinstance(inner.slice, ast.Slice):
                yield ast.Subscript(ast.Subscript(inner.value, node.slice, ast.Load()), inner.slice, node.ctx)


def _pairs(count: int) -> Iterator[tuple[int, int]]:
    for i in range(count):
        for j in range(i + 1, count):
            yield i, j


class SwapArguments:
    name, tier, prior = "swap-args", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return
        for i, j in _pairs(len(node.args)):
            args = list(node.args)
            args[i], args[j] = args[j], args[i]
            yield with_fields(node, args=args)  # type: ignore[misc]


class OffByOne:
    """±1 on an index, a bound, a count: ``range`` arguments, slice bounds, subscripts, compared and
    returned values (literals are :class:`ConstantTweak`'s)."""

    name, tier, prior = "off-by-one", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.expr) or (isinstance(node, ast.Constant) and type(node.value) is int):
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                isinstance(node.right, ast.Constant) and type(node.right.value) is int:
            return  # ``x - 1`` ± 1 is ``x - 2`` (the literal's change) or ``x`` (a deletion), never ``x - 1 + 1``
        parent = site.parent
        is_range_arg = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                        and parent.func.id == "range" and site.field == "args")
        # The numerator of ``//`` or ``%`` too: ``(month - 1) // 3`` counts from 1, ``month // 3`` from 0.
        divided = isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.FloorDiv, ast.Mod)) and \
            site.field == "left"
        if is_range_arg or isinstance(parent, ast.Slice) or is_value(site) or is_passed_count(site) or divided:
            yield plus(node, 1)
            yield plus(node, -1)


class UnwrapCall:
    """``f(x)`` → ``x``; ``x.strip()`` → ``x``."""

    name, tier, prior = "unwrap", 1, 5

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or node.keywords:
            return
        if isinstance(node.func, ast.Attribute) and not node.args:
            yield node.func.value
        for arg in node.args:
            if not isinstance(arg, ast.Starred):
                yield arg


class DropOperand:
    """``a + b`` → ``a`` or ``b``; ``a and b and c`` → ``a and c`` (drop one clause of a condition)."""

    name, tier, prior = "drop-operand", 1, 5

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.BinOp):
            yield node.left
            yield node.right
        elif isinstance(node, ast.BoolOp):
            for i in range(len(node.values)):
                rest = node.values[:i] + node.values[i + 1 :]
                yield rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)


CORE: list[Operator] = [
    CompareOp(), BinaryOp(), AugAssignOp(), BoolOpSwap(), NotToggle(), ConstantTweak(), SiblingSwap(), OffByOne(),
    NameSwap(), AttributeSwap(), SwapOperands(), SwapArguments(), UnwrapCall(), DropOperand(),
]

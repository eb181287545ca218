"""Where an expression needs parentheses: Python's precedence, so that a spliced edit means what
its tree means and no parenthesis is added that the grammar does not need."""

from __future__ import annotations

import ast

from ._scope import Site

ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Fields where any expression stands without parentheses.
_LOOSE_FIELDS = {
    (ast.Call, "args"), (ast.keyword, "value"), (ast.Subscript, "slice"), (ast.List, "elts"), (ast.Tuple, "elts"),
    (ast.Set, "elts"), (ast.Dict, "keys"), (ast.Dict, "values"), (ast.Slice, "lower"), (ast.Slice, "upper"),
    (ast.Slice, "step"), (ast.FormattedValue, "value"),
}
_PRECEDENCE: dict[type[ast.AST], int] = {
    ast.BitOr: 6, ast.BitXor: 7, ast.BitAnd: 8, ast.LShift: 9, ast.RShift: 9, ast.Add: 10, ast.Sub: 10,
    ast.Mult: 11, ast.Div: 11, ast.FloorDiv: 11, ast.Mod: 11, ast.MatMult: 11, ast.Pow: 13,
}
_ATOM, _UNARY, _COMPARE = 15, 12, 5  # lambda 0, if-else 1, or 2, and 3, not 4, comparisons 5, ...


def _same_precedence(old: ast.AST, new: ast.expr) -> bool:
    """Whether ``new`` binds exactly as ``old`` did, so it can stand where ``old`` stood unchanged."""
    if isinstance(old, ast.Compare) and isinstance(new, ast.Compare):
        return True
    if isinstance(old, ast.BinOp) and isinstance(new, ast.BinOp):
        return _PRECEDENCE.get(type(old.op)) == _PRECEDENCE.get(type(new.op))
    return isinstance(old, ast.BoolOp) and isinstance(new, ast.BoolOp) and type(old.op) is type(new.op)


def _precedence(node: ast.expr) -> int:
    """How tightly ``node`` binds, in the order of Python's grammar (higher binds tighter)."""
    if isinstance(node, ATOMIC):
        return _ATOM
    if isinstance(node, ast.Constant):
        value = node.value
        return _UNARY if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 else _ATOM
    if isinstance(node, ast.BinOp):
        return _PRECEDENCE.get(type(node.op), _ATOM)
    if isinstance(node, ast.UnaryOp):
        return 4 if isinstance(node.op, ast.Not) else _UNARY
    if isinstance(node, ast.Compare):
        return _COMPARE
    if isinstance(node, ast.BoolOp):
        return 3 if isinstance(node.op, ast.And) else 2
    if isinstance(node, ast.Await):
        return 14
    return {ast.IfExp: 1, ast.Lambda: 0}.get(type(node), -1)  # a walrus or a yield: always parenthesised


def _required(site: Site) -> int:
    """The least precedence an expression needs to stand at ``site`` without parentheses."""
    parent, field = site.parent, site.field
    if isinstance(parent, ast.stmt) or (type(parent), field) in _LOOSE_FIELDS:
        return 0
    if isinstance(parent, ast.BinOp):
        level = _PRECEDENCE.get(type(parent.op), _ATOM)
        if isinstance(parent.op, ast.Pow):
            return level + 1 if field == "left" else _UNARY
        return level if field == "left" else level + 1
    if isinstance(parent, ast.UnaryOp):
        return 4 if isinstance(parent.op, ast.Not) else _UNARY
    if isinstance(parent, ast.Compare):
        return _COMPARE + 1
    if isinstance(parent, ast.BoolOp):
        return 4 if isinstance(parent.op, ast.And) else 3
    if isinstance(parent, ast.IfExp):
        return 2
    if isinstance(parent, ast.Await):
        return 14
    return _ATOM


def needs_parens(site: Site, new: ast.expr, bare: bool = True) -> bool:
    """Whether ``new`` needs parentheses at ``site`` (where the old node stood ``bare``, or in parentheses
    the splice replaces too)."""
    if bare and _same_precedence(site.node, new):
        return False
    if isinstance(new, ast.Slice):
        return False  # ``s[1:-1]``: a slice is never parenthesized (``s[(1:-1)]`` does not parse)
    if isinstance(new, ast.Constant) and isinstance(new.value, (int, float)) and site.field == "value" and \
            isinstance(site.parent, ast.Attribute):
        return True  # ``(1).real``
    return _precedence(new) < max(_required(site), 0 if _precedence(new) >= 0 else 1)

"""Turning one edited node back into source text, keeping the rest of the text as written.

The edit is spliced into the original text at the node's position, so a fix's diff touches only
what changed (formatting and comments elsewhere stay). Where a splice cannot be done safely the
whole function is unparsed instead.
"""

from __future__ import annotations

import ast
import copy

from ._edits import Insert, Replacement
from ._scope import Scope, Site

_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Fields where any expression stands without parentheses.
_LOOSE_FIELDS = {
    (ast.Call, "args"), (ast.keyword, "value"), (ast.Subscript, "slice"), (ast.List, "elts"), (ast.Tuple, "elts"),
    (ast.Set, "elts"), (ast.Dict, "keys"), (ast.Dict, "values"), (ast.Slice, "lower"), (ast.Slice, "upper"),
    (ast.Slice, "step"), (ast.FormattedValue, "value"),
}


_PRECEDENCE: dict[type[ast.AST], int] = {
    ast.BitOr: 1, ast.BitXor: 2, ast.BitAnd: 3, ast.LShift: 4, ast.RShift: 4, ast.Add: 5, ast.Sub: 5,
    ast.Mult: 6, ast.Div: 6, ast.FloorDiv: 6, ast.Mod: 6, ast.MatMult: 6, ast.Pow: 7,
}


def _same_precedence(old: ast.AST, new: ast.expr) -> bool:
    """Whether ``new`` binds exactly as ``old`` did, so it can stand where ``old`` stood unchanged."""
    if isinstance(old, ast.Compare) and isinstance(new, ast.Compare):
        return True
    if isinstance(old, ast.BinOp) and isinstance(new, ast.BinOp):
        return _PRECEDENCE.get(type(old.op)) == _PRECEDENCE.get(type(new.op))
    return isinstance(old, ast.BoolOp) and isinstance(new, ast.BoolOp) and type(old.op) is type(new.op)


def _needs_parens(site: Site, new: ast.expr) -> bool:
    if isinstance(new, _ATOMIC) or _same_precedence(site.node, new):
        return False
    if isinstance(new, ast.Constant):
        value = new.value
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0
    if isinstance(site.parent, ast.stmt):
        return False
    return (type(site.parent), site.field) not in _LOOSE_FIELDS


def splice(source: str, function: ast.FunctionDef | ast.AsyncFunctionDef, site: Site, new: Replacement) -> str:
    """``source`` with ``site.node`` replaced by ``new``."""
    lines = source.splitlines(keepends=True)
    node = site.node
    start, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", None)
    col, end_col = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", None)
    if not start or end is None or end_col is None:
        return _unparse_with(function, site, new)
    if isinstance(new, (list, Insert)):
        head = lines[start - 1].encode()[:col]
        tail = lines[end - 1].encode()[end_col:]
        if head.strip() or (tail.strip() and not tail.strip().startswith(b"#")):
            return _unparse_with(function, site, new)  # shares its line with other code
        indent = head.decode()
        if isinstance(new, Insert):
            at = end if new.after else start - 1
            before = lines[:at]
            if before and not before[-1].endswith("\n"):  # the last line of a file may have no newline
                before[-1] += "\n"
            return "".join([*before, _indented(new.stmts, indent), *lines[at:]])
        if not new and len(getattr(site.parent, site.field)) == 1:
            new = [ast.Pass()]
        return "".join([*lines[: start - 1], _indented(new, indent), *lines[end:]])
    text = ast.unparse(new)
    if _needs_parens(site, new):
        text = f"({text})"
    first, last = lines[start - 1].encode(), lines[end - 1].encode()
    joined = first[:col] + text.encode() + last[end_col:]
    return "".join([*lines[: start - 1], joined.decode(), *lines[end:]])


def _indented(stmts: list[ast.stmt], indent: str) -> str:
    # unparse reads ``lineno`` of assignments (for type comments); built statements have none yet.
    return "".join(f"{indent}{line}\n" for stmt in stmts
                   for line in ast.unparse(ast.fix_missing_locations(stmt)).splitlines())


def _unparse_with(function: ast.FunctionDef | ast.AsyncFunctionDef, site: Site, new: Replacement) -> str:
    twin = copy.deepcopy(function)
    there = Scope.of(twin).sites[site.order]
    slot = getattr(there.parent, there.field)
    if isinstance(new, Insert):
        at = there.index + 1 if new.after else there.index
        slot[at:at] = new.stmts
    elif isinstance(new, list):
        body = new or ([ast.Pass()] if len(slot) == 1 else [])
        slot[there.index : there.index + 1] = body
    elif there.index >= 0:
        slot[there.index] = new
    else:
        setattr(there.parent, there.field, new)
    return ast.unparse(ast.fix_missing_locations(twin)) + "\n"

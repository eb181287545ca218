"""Tier 3, expression copy: the right expression is often already written elsewhere in the function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ._edits import Operator, Replacement
from ._scope import Scope, Site


def _kind(node: ast.AST) -> str:
    """Expressions of one kind can stand in for each other: values, conditions, collections."""
    if isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return "condition"
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp, ast.UnaryOp)):
        return "value"
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp)):
        return "collection"
    return ""


class ExpressionCopy:
    """Replace an expression with a copy of another expression of the same kind from the function."""

    name, tier, prior = "copy-expr", 3, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        kind = _kind(node)
        if not kind or site.field == "func" or isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            return
        own = ast.dump(node)
        for donor in scope.expressions:
            if _kind(donor) == kind and ast.dump(donor) != own:
                yield donor


COPY: list[Operator] = [ExpressionCopy()]

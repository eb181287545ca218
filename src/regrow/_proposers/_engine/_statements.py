"""Tier 4, statement edits: delete a statement, or add one copied from the function or built from
its names (the bug is a missing or an extra line)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ._edits import Insert, Operator, Replacement, load, names_in, rename
from ._scope import Scope, Site

_BLOCKS = frozenset({"body", "orelse", "finalbody"})
_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)  # nothing placed after these would run
_BUILT_METHODS = ("append", "add")


def _in_block(site: Site) -> bool:
    return isinstance(site.node, ast.stmt) and site.field in _BLOCKS and site.index >= 0


def _is_last(site: Site) -> bool:
    return site.index == len(getattr(site.parent, site.field)) - 1 and not isinstance(site.node, _ENDS)


def _placed(site: Site, stmt: ast.stmt) -> Iterator[Insert]:
    """``stmt`` put before the site, and also after it where the site ends its block."""
    yield Insert([stmt])
    if _is_last(site):
        yield Insert([stmt], after=True)


def _renamed(stmt: ast.stmt, scope: Scope) -> Iterator[ast.stmt]:
    """``stmt`` with one of its variables renamed to another variable, everywhere in it."""
    for old in names_in(stmt):
        if old in scope.variables:
            for new in scope.variables:
                if new != old:
                    yield rename(stmt, old, new)  # type: ignore[misc]


class DeleteStatement:
    name, tier, prior = "delete-stmt", 4, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        is_docstring = site.index == 0 and isinstance(site.node, ast.Expr) and isinstance(site.node.value, ast.Constant)
        if _in_block(site) and not is_docstring:
            yield []


class InsertCopy:
    """Insert a copy of another statement of the function (the same statement written twice counts)."""

    name, tier, prior = "insert-copy", 4, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if _in_block(site):
            for stmt in scope.statements:
                yield from _placed(site, stmt)  # shared: spliced as written


class ReplaceWithCopy:
    name, tier, prior = "replace-copy", 4, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if _in_block(site) and isinstance(site.node, tuple(type(s) for s in scope.statements)):
            own = ast.dump(site.node)
            for stmt in scope.statements:
                if ast.dump(stmt) != own:
                    yield [stmt]


class InsertRenamedCopy:
    """Insert a copy of another statement with one identifier renamed (``key = key.strip()`` →
    ``value = value.strip()``)."""

    name, tier, prior = "insert-renamed", 4, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if _in_block(site):
            for stmt in scope.statements:
                for twin in _renamed(stmt, scope):
                    yield from _placed(site, twin)


class InsertBuilt:
    """Insert a statement built from names in scope: ``x.append(y)``, ``x.add(y)``, ``x = y``, ``return x``."""

    name, tier, prior = "insert-built", 4, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if not _in_block(site):
            return
        methods = list(dict.fromkeys([*_BUILT_METHODS, *scope.methods]))
        for x in scope.variables:
            yield from _placed(site, ast.Return(load(x)))
            for y in scope.variables:
                if x == y:
                    continue
                for method in methods:
                    stmt = ast.Expr(ast.Call(ast.Attribute(load(x), method, ast.Load()), [load(y)], []))
                    yield from _placed(site, stmt)
                yield from _placed(site, ast.Assign([ast.Name(x, ast.Store())], load(y)))


STATEMENTS: list[Operator] = [DeleteStatement(), InsertCopy(), ReplaceWithCopy(), InsertRenamedCopy(), InsertBuilt()]

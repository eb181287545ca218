"""Compiling a candidate from the function's tree with its edit put in place, not from its text.

Making a candidate from its text parses the whole function again, about half of what making it
costs (a 116-line function: ~1 ms of ~2 ms), and the engine makes thousands. The edit is a change of
the tree it was made from: put into a private copy of that tree, compiled, and taken out again, it
gives the same code as the text (the splice writes what the tree says, parentheses and all;
``tests/proposers/test_engine_inplace.py`` compares the two on every edit of a set of functions), for
the price of the compile alone. The text is still what a candidate is: the session's proof compiles
and judges it, so a text that said something else would fail there, never be installed.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import types
from collections.abc import Callable, Iterator

from ..._target._target import Target
from ._edits import Branch, Insert, Replacement
from ._scope import Scope, Site

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class InPlace:
    """Compiles edits of ``function`` (the target's tree, as the plan's sites index it) for ``target``."""

    def __init__(self, target: Target, function: FunctionNode) -> None:
        self.target = target
        self.node: FunctionNode = copy.deepcopy(function)
        self.node.decorator_list = []
        self.sites = Scope.of(self.node).sites
        self._fresh = max((getattr(node, "end_lineno", 0) or 0 for node in ast.walk(self.node)), default=0) + 1
        args = self.node.args
        self._defaults = {id(node) for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
                          for node in ast.walk(default)}
        # An edit inside an f-string is written back into it, where the text may say what the tree cannot
        # (quotes that only Python 3.12 takes there): its text is what is compiled.
        self._in_fstrings = {id(node) for joined in ast.walk(self.node) if isinstance(joined, ast.JoinedStr)
                             for node in ast.walk(joined)}

    def compile(self, site: Site, new: Replacement, text: str) -> types.FunctionType:
        """The function the edit ``new`` at ``site`` makes, its lines shown from ``text`` (``""`` will do where
        :meth:`needs_text` says no); ``SyntaxError``/``ValueError`` as compiling the text would raise."""
        there = self.sites[site.order]
        if self.needs_text(site):
            return self.target.compile(text)
        with self.applied(site, new) as node:
            return self.target.compile_node(node, text, same_defaults=id(there.node) not in self._defaults)

    def needs_text(self, site: Site) -> bool:
        """Whether an edit at ``site`` is compiled from its text (inside an f-string)."""
        return id(self.sites[site.order].node) in self._in_fstrings

    @contextlib.contextmanager
    def applied(self, site: Site, new: Replacement) -> Iterator[FunctionNode]:
        """Within: the tree with the edit in place (taken out again after)."""
        there = self.sites[site.order]
        undo = _put(there, new)
        restore = _relined(new, there.node, self._fresh)
        try:
            yield self.node
        finally:
            restore()
            undo()


def _located(node: ast.AST, like: ast.AST) -> ast.AST:
    """``node`` with the position of ``like`` where it has none, and its own new children with its own."""
    if not hasattr(node, "lineno") and hasattr(like, "lineno"):
        ast.copy_location(node, like)
    return ast.fix_missing_locations(node)


def _relined(new: Replacement, node: ast.AST, fresh: int) -> Callable[[], None]:
    """Puts the nodes ``new`` brings on the lines its text would give them, as far as the code can tell:
    what puts them back (they may be shared with the tree and other edits).

    Python 3.13 joins two loads or a store and a load into one instruction only within a line, so the code
    of an edit depends on which of its parts share a line. The text writes an edit of a one-line node on
    that line, whatever lines its parts were copied from, and each new statement on a line of its own (a
    line past the function's here: only which nodes share a line matters, and the text is what is shown)."""
    line: int = getattr(node, "lineno", 0)
    one_line = line > 0 and getattr(node, "end_lineno", line) == line
    lines: list[tuple[ast.AST, int]]
    if isinstance(new, Branch):
        lines = [(new.test, fresh), *((stmt, fresh + 1 + i) for i, stmt in enumerate(new.body))]
    elif isinstance(new, Insert):
        lines = [(stmt, fresh + i) for i, stmt in enumerate(new.stmts)]
    elif isinstance(new, list):
        lines = [(stmt, line if i == 0 and one_line else fresh + i) for i, stmt in enumerate(new)]
    else:
        lines = [(new, line)] if one_line else []
    was: list[tuple[ast.AST, int, int | None, int | None]] = []
    for root, at in lines:
        for part in ast.walk(root):
            if hasattr(part, "lineno"):
                was.append((part, part.lineno, part.end_lineno, part.end_col_offset))  # type: ignore[attr-defined]
                part.lineno = part.end_lineno = at  # type: ignore[attr-defined]
                part.end_col_offset = max(part.col_offset, part.end_col_offset or 0)  # type: ignore[attr-defined]

    def restore() -> None:
        for part, lineno, end_lineno, end_col in was:
            part.lineno, part.end_lineno, part.end_col_offset = lineno, end_lineno, end_col  # type: ignore[attr-defined]
    return restore


def _put(there: Site, new: Replacement) -> Callable[[], None]:
    """Puts ``new`` in place of (or beside) the node at ``there``; what takes it out again."""
    node, parent, field, index = there.node, there.parent, there.field, there.index
    if isinstance(new, Branch):
        assert isinstance(node, ast.If)
        orelse = node.orelse
        node.orelse = [_located(ast.If(new.test, list(new.body), orelse), node)]  # type: ignore[list-item]

        def undo_branch() -> None:
            node.orelse = orelse
        return undo_branch
    slot = getattr(parent, field)
    if isinstance(new, Insert):
        at = index + 1 if new.after else index
        stmts = [_located(stmt, node) for stmt in new.stmts]
        slot[at:at] = stmts

        def undo_insert() -> None:
            del slot[at:at + len(stmts)]
        return undo_insert
    if isinstance(new, list):
        body = [_located(stmt, node) for stmt in new] or ([_located(ast.Pass(), node)] if len(slot) == 1 else [])
        slot[index:index + 1] = body

        def undo_list() -> None:
            slot[index:index + len(body)] = [node]
        return undo_list
    placed = _located(new, node)
    if index >= 0:
        slot[index] = placed

        def undo_item() -> None:
            slot[index] = node
        return undo_item
    setattr(parent, field, placed)

    def undo_field() -> None:
        setattr(parent, field, node)
    return undo_field

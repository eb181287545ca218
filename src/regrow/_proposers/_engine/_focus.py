"""The engine pointed at a place: edits at the lines a model named, with the model's expressions.

A "locate" request (:mod:`regrow._proposers._llm._locate`) asks a model only where the defect is — a line, the
kind of edit, the code it would use there — and leaves making and judging the edits to the engine.
:class:`FocusedEngine` is the engine with its search narrowed to those lines (in the order they were
named) and one more operator, :class:`Suggested`, that puts the model's expression, and each of its
parts, in place of each expression on them (the model's tokens are the engine's vocabulary there),
and a statement the model wrote in place of the simple statement on them, or before or after it.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from ..._sandbox._warm import Worker
from .._proposer import Request
from ._edits import Insert, Replacement
from ._operators import OPERATORS
from ._plan import Plan
from ._scope import Scope, Site
from ._search import Engine

_PIECES = 24  # parts of the suggested expressions tried at each site, at most
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert, ast.Expr, ast.Pass,
           ast.Break, ast.Continue)  # statements a suggestion may replace, and be


@dataclasses.dataclass(frozen=True)
class Focus:
    """Where to search: ``lines`` of the definition (1 = the ``def`` line), most likely first, and
    ``code`` (Python source: expressions, or simple statements) put at them."""

    lines: tuple[int, ...]
    code: tuple[str, ...] = ()


class Suggested:
    """Put a suggested expression, or one of its parts, in place of an expression at a site; and a
    suggested simple statement in place of a simple statement site, or before or after it."""

    name, tier, prior = "suggested", 1, -1

    def __init__(self, code: Sequence[str]) -> None:
        seen: set[str] = set()
        self.pieces: list[ast.expr] = []
        self.statements: list[ast.stmt] = []
        for text in code:
            tree = _parsed(text)
            if isinstance(tree, ast.stmt):
                self.statements.append(tree)
            for node in ast.walk(tree) if tree is not None else ():  # the whole expression first, then its parts
                if isinstance(node, ast.expr) and not isinstance(node, (ast.Starred, ast.Slice)) \
                        and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
                    key = ast.dump(node)
                    if key not in seen:
                        seen.add(key)
                        self.pieces.append(node)
        self.pieces = self.pieces[:_PIECES]

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, _SIMPLE) and site.index >= 0:
            here = ast.dump(node)
            for stmt in self.statements:
                if ast.dump(stmt) != here:
                    yield [copy.deepcopy(stmt)]
            for stmt in self.statements:
                yield Insert([copy.deepcopy(stmt)])
                yield Insert([copy.deepcopy(stmt)], after=True)
        if not isinstance(node, ast.expr) or isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            return
        here = ast.dump(node)
        for piece in self.pieces:
            if ast.dump(piece) != here:
                yield copy.deepcopy(piece)


def _parsed(text: str) -> ast.expr | ast.stmt | None:
    """``text`` as one expression or one simple statement (``None`` when it is neither)."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        pass
    try:
        body = ast.parse(text.strip()).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return body[0] if len(body) == 1 and isinstance(body[0], _SIMPLE) else None


class FocusedEngine(Engine):
    """The engine searching only at ``focus.lines``, with :class:`Suggested` as its first operator."""

    def __init__(self, focus: Focus, **options: Any) -> None:
        super().__init__([Suggested(focus.code), *OPERATORS], **options)
        self.focus = focus

    def plan(self, request: Request, worker: Worker | None = None) -> Plan:
        plan = super().plan(request, worker)
        rank = {line: number for number, line in enumerate(self.focus.lines)}
        kept = sorted((edit for edit in plan.edits if edit.site.line in rank),
                      key=lambda edit: (rank[edit.site.line], edit.key))
        plan.stats.edits = len(kept)
        return dataclasses.replace(plan, edits=kept)

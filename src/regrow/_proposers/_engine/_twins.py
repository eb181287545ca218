"""Tier 2, the piece a twin kept: real code is written in near-copies — ``typedkey`` beside
``typedmethodkey``, one ``__call__`` per mixin, ``lru_cache`` beside ``fifo_cache`` — and a bug that
dropped a piece of one copy leaves it written in the others.

At an expression of the function, the operator looks for expressions of the module that hold the same
expression (or, for a large one, one of the same shape) as a direct part — an argument, a callee, an
operand — in a function that shares statements with this one, and puts the same context around the
function's own expression: ``return key`` → ``return key + tuple(map(type, args))``, ``return val`` →
``return cache.setdefault(key, val)``, ``return _cache(...)`` → ``return _cache(...)(maxsize)``.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from ._blocks import _replaced
from ._edits import Operator, Replacement
from ._module import Context, context_keys
from ._scope import Scope, Site

_MAX_TWINS = 6  # contexts tried at one expression


class TwinContext:
    """``e`` → ``c(e)``: the context a near-copy of the function writes around the same expression."""

    name, tier, prior = "twin", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.expr) or isinstance(node, (ast.Constant, ast.JoinedStr, ast.Starred)) or \
                site.field == "func" or not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return
        found = [c for key in context_keys(node) for c in scope.module.contexts.get(key, ())]
        if not found:
            return
        own = scope.statement_dumps
        shared = {id(c.function): len(scope.module.statements.get(id(c.function), frozenset()) & own) for c in found}
        ranked = sorted((c for c in found if shared[id(c.function)] and
                         scope.module.statements.get(id(c.function)) != own), key=lambda c: -shared[id(c.function)])
        made: set[str] = {ast.dump(site.parent)}
        for context in ranked:
            new = _replaced(context.outer, context.part, node)
            text = ast.dump(new)
            if text in made or not _resolved(context, scope):
                continue
            made.add(text)
            yield new
            if len(made) > _MAX_TWINS:
                return


def _resolved(context: Context, scope: Scope) -> bool:
    """Whether every name the context reads (outside the part it holds) means something in the function."""
    part = {id(n) for n in ast.walk(context.part)}
    for n in ast.walk(context.outer):
        if isinstance(n, ast.Name) and id(n) not in part:
            if not isinstance(n.ctx, ast.Load):
                return False
            if n.id not in scope.variables and n.id not in scope.module.namespace and not hasattr(builtins, n.id):
                return False
    return True


TWINS: list[Operator] = [TwinContext()]

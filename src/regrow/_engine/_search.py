"""The built-in engine: AST mutations of the target, most suspicious code first.

No network, no key, deterministic: the same function and failure give the same candidates in the
same order.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence

from .._candidate import Candidate
from .._proposer import Request
from .._target import find_function
from ._operators import OPERATORS, Operator
from ._scope import Scope
from ._splice import splice

Suspicion = Callable[[int], float]


class Engine:
    """The default proposer: search over single-site mutations of the target.

    ``operators`` is the set of mutation families to use (all of ``OPERATORS`` by default).
    """

    name = "engine"

    def __init__(self, operators: Sequence[Operator] | None = None) -> None:
        self.operators = list(operators if operators is not None else OPERATORS)

    def propose(self, request: Request) -> Iterator[Candidate]:
        target = request.target
        source = target.bare_source
        function = find_function(source, target.name)
        scope = Scope.of(function)
        suspicion = self.localize(request)
        ranked = []
        for site in scope.sites:
            score = suspicion(site.line)
            for op in self.operators:
                for k, new in enumerate(op.edits(site, scope)):
                    ranked.append(((op.tier, -score, op.prior, site.order, k), op, site, new))
        ranked.sort(key=lambda item: item[0])
        seen = {ast.dump(function)}
        for _, op, site, new in ranked:
            try:
                text = splice(source, function, site, new)
                dump = ast.dump(find_function(text, target.name))
            except (SyntaxError, ValueError):
                continue
            if dump in seen:
                continue
            seen.add(dump)
            yield Candidate(text, origin="engine", operator=op.name, edit_size=1, line=site.line)

    def localize(self, request: Request) -> Suspicion:
        """How suspicious each line of the definition is (line 1 is the ``def``).

        Lines nearer the failing line rank first; with no failing line every line ranks alike.
        """
        failure, target = request.failure, request.target
        if failure.lineno is None:
            return lambda line: 0.0
        failing = failure.lineno - target.def_lineno + 1
        return lambda line: 1.0 / (1 + abs(line - failing))

"""A proposer that offers fixed candidates, for tests that need to know exactly what is proposed."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from regrow._proposers._engine import Engine
from regrow.extend import Candidate, Request


class Scripted:
    """Yields the given sources in order, and records each request it was asked with."""

    name = "scripted"

    def __init__(self, *sources: str) -> None:
        self.sources = [textwrap.dedent(s) for s in sources]
        self.requests: list[Request] = []

    def propose(self, request: Request) -> Iterator[Candidate]:
        self.requests.append(request)
        for source in self.sources:
            yield Candidate(source, origin="scripted")


class EngineEdits(Engine):
    """Stands in for the built-in engine's edits: the given sources, trusted as the engine is (see
    regrow._proof._policy) because the proposer *is* an Engine; a candidate's origin label counts for nothing."""

    def __init__(self, *sources: str) -> None:
        super().__init__()
        self.sources = [textwrap.dedent(s) for s in sources]

    def propose(self, request: Request) -> Iterator[Candidate]:
        for source in self.sources:
            yield Candidate(source, origin="engine")

"""A proposer that offers fixed candidates, for tests that need to know exactly what is proposed."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from regrow import Candidate, Request


class Scripted:
    """Yields the given sources in order, and records each request it was asked with."""

    name = "scripted"

    def __init__(self, *sources: str, origin: str = "scripted") -> None:
        self.sources = [textwrap.dedent(s) for s in sources]
        self.requests: list[Request] = []
        self.origin = origin  # "engine" stands in for the built-in engine's edits (see regrow._policy)

    def propose(self, request: Request) -> Iterator[Candidate]:
        self.requests.append(request)
        for source in self.sources:
            yield Candidate(source, origin=self.origin)

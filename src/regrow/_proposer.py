"""The proposer protocol: (target, failure, history) in, candidate fixes out."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._candidate import Candidate
    from ._checks import Check, Verdict
    from ._events import EventHandler
    from ._failure import Failure
    from ._target import Target


@dataclasses.dataclass(frozen=True)
class Attempt:
    """A candidate and the verdict it got."""

    candidate: Candidate
    verdict: Verdict


@dataclasses.dataclass(frozen=True)
class Request:
    """What a proposer is asked with: the session's state at this attempt."""

    target: Target
    failure: Failure
    history: Sequence[Attempt]
    checks: Sequence[Check]
    attempt: int
    deadline: float  # time.monotonic() by which the session must end
    max_candidates: int = 2000
    max_attempts: int = 3  # calls a model proposer may make in this session
    events: tuple[EventHandler, ...] = ()  # where a proposer sends its own events (see ``emit``)
    # The candidates earlier proposers judged themselves (the engine screens thousands in its
    # worker) with their verdicts, the session's live list: a model proposer summarises them.
    screened: Sequence[Attempt] = ()
    # Whether anyone outside the session listens to ``events`` (the user's handlers): a model
    # proposer streams only then. ``None``: whoever made the request listens to the events it gave.
    listening: bool | None = None
    jobs: int | None = None  # workers a proposer may judge candidates in at once (None: every core)
    # Folders the original writes, whose writes go to a throwaway view in every sandboxed child (Limits.views).
    views: tuple[str, ...] = ()
    # Environment variables kept in every sandboxed child although named like secrets (Limits.environ_keep).
    environ: tuple[str, ...] = ()
    # The checks say what is right (see regrow._policy); without, the no-oracle policy decides what is
    # installed, and the engine does not abstain (docs/engine.md).
    oracle: bool = True

    @property
    def listened(self) -> bool:
        return bool(self.events) if self.listening is None else self.listening


@runtime_checkable
class Proposer(Protocol):
    """Turns a :class:`Request` into candidate fixes, best first.

    ``propose`` may yield lazily: the session stops iterating as soon as a candidate is proven or a
    budget runs out, so a search-based proposer can generate candidates on demand. ``history`` is
    the session's live list: by the time the next candidate is asked for, the verdict of the one
    just yielded is in it, so a model proposer can loop ``max_attempts`` times over its own replies.
    """

    name: str

    def propose(self, request: Request) -> Iterable[Candidate]: ...

"""The proposer protocol: (target, failure, history) in, candidate fixes out."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .._ambiguity import Ambiguity
    from .._candidate import Candidate
    from .._checks._oracles import Check
    from .._events import EventHandler
    from .._evidence._failure import Failure
    from .._target._target import Target
    from .._verdict import Attempt


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
    # Whether the texts of the candidates a proposer screens itself are wanted with their verdict events (a
    # user's handler shows them, a later proposer reads them); without, only the passing ones carry theirs.
    screen_texts: bool = True
    jobs: int | None = None  # workers a proposer may judge candidates in at once (None: every core)
    # Folders the original writes, whose writes go to a throwaway view in every sandboxed child (Limits.views).
    views: tuple[str, ...] = ()
    # Environment variables kept in every sandboxed child although named like secrets (Limits.environ_keep).
    environ: tuple[str, ...] = ()
    # The checks say what is right (see regrow._proof._policy); without, the no-oracle policy decides what is
    # installed, and the engine does not abstain (docs/engine.md).
    oracle: bool = True
    # An earlier proposer's candidates passed every check but disagree (the engine abstained): a model proposer
    # settles it with a choose request instead of writing fixes of its own (docs/llm.md).
    ambiguity: Ambiguity | None = None

    @property
    def listened(self) -> bool:
        return bool(self.events) if self.listening is None else self.listening


class BaseProposer:
    """What a proposer can do besides propose, declared (never probed for): subclass it and override.

    - ``trusted``: whether its candidates are the engine's kind of edit, judged as such (the no-oracle
      policy's engine-only rule, the in-process fast path). ``False`` unless a proposer says otherwise:
      a model's or a user's candidate is railed and capability-checked (see regrow._proof._prove).
    - ``trusts(candidate)``: the same, per candidate (the cache decides from the store's record).
    - ``stop_reason``: why its last stream ended without more to offer ("" when it has nothing to say).

    A proposer that does not derive from this class declares nothing, and is treated as this class's
    defaults: untrusted, with no stop reason.
    """

    name: str
    trusted: bool = False

    @property
    def stop_reason(self) -> str:
        """Why the last stream ended without more to offer: nothing to say, unless overridden."""
        return ""

    def trusts(self, candidate: Candidate) -> bool:
        """Whether ``candidate`` is judged as a trusted proposer's edit: ``trusted``, unless overridden."""
        return self.trusted


def trusts(proposer: Proposer, candidate: Candidate) -> bool:
    """Whether ``candidate`` from ``proposer`` is judged as the engine's edit (see :class:`BaseProposer`)."""
    return isinstance(proposer, BaseProposer) and proposer.trusts(candidate) is True


def stop_reason(proposer: Proposer) -> str:
    """Why ``proposer``'s last stream ended, as it declares it (see :class:`BaseProposer`)."""
    return proposer.stop_reason if isinstance(proposer, BaseProposer) else ""


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

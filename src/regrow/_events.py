"""Typed events a session sends to callbacks while it works."""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Callable, Literal

if TYPE_CHECKING:
    from ._candidate import Candidate
    from ._checks import Verdict

log = logging.getLogger("regrow")

EventType = Literal[
    "session_start",  # a failure started a repair session
    "attempt_start",  # a proposer was asked for candidates
    "candidate",  # a proposer offered a candidate
    "verdict",  # a candidate was judged
    "installed",  # a proven fix replaced the live code
    "exhausted",  # every budget ran out without a fix
    "cooldown",  # a recurring failure was not repaired again so soon
    "proposer_error",  # a proposer failed; the session goes on with the next one
]


@dataclasses.dataclass(frozen=True)
class Event:
    """One thing that happened in a repair session."""

    type: EventType
    target: str
    attempt: int = 0
    candidate: Candidate | None = None
    verdict: Verdict | None = None
    message: str = ""


EventHandler = Callable[[Event], None]


def emit(handlers: tuple[EventHandler, ...], event: Event) -> None:
    """Send ``event`` to each handler; a handler that raises is logged, never fatal to the repair."""
    for handler in handlers:
        try:
            handler(event)
        except Exception:
            log.exception("regrow: event handler %r raised on %s", handler, event.type)

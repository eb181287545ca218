"""Typed events a session sends to callbacks while it works."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ._candidate import Candidate
    from ._verdict import Verdict

log = logging.getLogger("regrow")

EventType = Literal[
    "session_start",  # a failure started a repair session
    "attempt_start",  # a proposer was asked for candidates
    "progress",  # a proposer says how far its work before the first candidate got (message: what it does now)
    "candidate",  # a proposer offered a candidate
    "verdict",  # a candidate was judged
    "installed",  # a proven fix replaced the live code
    "exhausted",  # every budget ran out without a fix
    "cooldown",  # a recurring failure was not repaired again so soon
    "proposer_error",  # a proposer failed; the session goes on with the next one
    "model_call",  # a model proposer finished one call (message: tokens, latency, cost)
    "propose_chunk",  # a model streamed part of its reply (``delta``)
    "transient_retry",  # a model call failed transiently and will be retried (message: why, delay)
    "budget_refused",  # a model call was refused by a call/token/cost budget (message: which)
    "reply_refused",  # a model reply held no usable candidate (message: why)
    "module_installed",  # a missing module was installed from allow_install (message: what, where)
    "install_refused",  # a missing module was not installed (message: why)
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
    delta: str = ""  # streamed text, for "propose_chunk"


EventHandler = Callable[[Event], None]


def emit(handlers: tuple[EventHandler, ...], event: Event) -> None:
    """Send ``event`` to each handler; a handler that raises is logged, never fatal to the repair."""
    for handler in handlers:
        try:
            handler(event)
        except Exception:
            log.exception("event handler %r raised on %s", handler, event.type)

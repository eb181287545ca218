"""A healed function in a live service: one failure one repair, and callers that never wait too long.

:class:`~._heal.Healing` runs at most one session per function at a time (a :class:`Running`); a
failing call waits for it no longer than ``wait=`` allows and the session goes on in the
background. Across the process, ``SESSIONS`` caps how many sessions start per minute. What every
failure became is counted in a :class:`Tally` (``regrow.state(f).tally``).
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
import inspect
import logging
import threading
import time
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from .._evidence._failure import safe_repr
from .._redact import redact_text
from .._sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from .._evidence._failure import Failure
    from .._result import RepairResult
    from ._options import Options

log = logging.getLogger("regrow")

Skip = Literal["cooldown", "running", "cap"]
SKIPPED: dict[str, str] = {  # what each reason means, for the caller's message
    "cooldown": "the same bug could not be repaired a short while ago (cooldown=)",
    "running": "the function's repair session was already running",
    "cap": "the process started sessions_per_minute= repair sessions in the last minute",
}
WINDOW = 60.0  # seconds: the cap counts the sessions started in the last minute


class _SessionCap:
    """The sessions ``@heal`` started in this process lately: one private object with a lock."""

    __slots__ = ("_lock", "_started")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: collections.deque[float] = collections.deque()

    def take(self, limit: int | None) -> bool:
        """Count a session starting now, unless ``limit`` sessions started in the last minute; whether it may."""
        now = time.monotonic()
        with self._lock:
            while self._started and self._started[0] <= now - WINDOW:
                self._started.popleft()
            if limit is not None and len(self._started) >= limit:
                return False
            self._started.append(now)
            return True

    def clear(self) -> None:
        """Forget the sessions counted so far (a test suite's fixture; a new minute does the same)."""
        with self._lock:
            self._started.clear()


SESSIONS = _SessionCap()


@dataclasses.dataclass
class Tally:
    """What a healed function's failures became: ``regrow.state(f).tally``.

    ``failures``: failing calls seen while healing was on (raised, or a result ``verify`` rejected);
    ``sessions``: repair sessions started; ``skipped``: failures that started none, by reason
    (``"cooldown"``: the same bug could not be repaired lately; ``"running"``: the function's
    session was already running, and the call joined it; ``"cap"``: the process had started
    ``sessions_per_minute`` sessions in the last minute); ``blind``: fixes installed that no oracle
    proved (no ``verify=``, ``tests=`` or ``record=``): each was logged at WARNING with the value it
    returns where the original raised.
    """

    failures: int = 0
    sessions: int = 0
    skipped: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    blind: int = 0


class Running:
    """One repair session of a healed function: run in the failing caller's thread (``wait=None``) or
    on a background thread of its own; callers wait on ``done``, each as long as its policy allows.

    ``work`` is the session; ``ended`` is called after it, whatever happened, before ``done`` is set.
    """

    def __init__(self, work: Callable[[], RepairResult], ended: Callable[[], None], *, inline: bool) -> None:
        self.work, self.ended, self.inline = work, ended, inline
        self.done = threading.Event()
        self.result: RepairResult | None = None
        self.internal: Exception | None = None  # a fault inside regrow: the user's error stands
        self.thread: int | None = None  # the thread running it (regrow._heal._forked)

    def run(self) -> None:
        self.thread = threading.get_ident()
        try:
            self.result = self.work()
        except Exception as exc:
            self.internal = exc
        finally:
            self.ended()
            self.done.set()

    def start(self) -> None:
        """Run on a daemon thread (a process that exits does not wait for a search; what was proven is in the
        store before it is installed); the caller's context goes with it."""
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self.run,), name="regrow-heal", daemon=True).start()


def value_at(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What ``fn`` returns on these arguments, as a redacted repr (an awaited coroutine's value)."""
    value = fn(*args, **kwargs)
    if inspect.iscoroutine(value):
        import asyncio  # only for a coroutine function: not at start-up (issue 26)

        value = asyncio.run(value)
    return redact_text(safe_repr(value))


def blind_value(fn: types.FunctionType, args: tuple[Any, ...], kwargs: dict[str, Any], sandbox: Sandbox,
                timeout: float) -> str:
    """What the installed fix returns at the failing call, computed in the sandbox (never in the host, where
    a second call could repeat the caller's side effects); or why it could not be."""
    try:
        outcome = sandbox.call(value_at, fn, args, kwargs, limits=Limits(timeout=timeout))
    except Exception as exc:  # the fix is installed already: a broken sandbox costs only the value
        return f"a value regrow could not compute ({exc!r})"
    if outcome.ok and isinstance(outcome.value, str):
        return outcome.value
    return f"a value regrow could not compute ({outcome.reason()})"


def warn_blind(func: types.FunctionType, options: Options, result: RepairResult, failure: Failure,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Say, at WARNING, what a fix no oracle proved returns where the original raised: nothing checked it."""
    from ._options import default_sandbox

    value = blind_value(func, args, kwargs, options.sandbox or default_sandbox(), options.budget.candidate_timeout)
    log.warning("%s: installed a fix that no oracle proved (no verify=, tests= or record=): where the original "
                "raised (%s) it now returns %s. Nothing checked that this value is right; give verify= or "
                "tests= to check it (docs/production.md).\n%s", func.__qualname__, failure.summary(),
                value, result.diff)

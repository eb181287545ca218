"""A healed function's state (:class:`Healing`): what a failure, a rejected result or a failed test does.

The decorator that makes it is :mod:`._decorator`. The failure and its checks are gathered here and
handed to the one assembly (:func:`regrow._heal._assembly.run_repair`); no repair logic lives here beyond
deciding *whether* a failure starts a repair (the cooldown) and what a fix changes for the wrapper.
"""

from __future__ import annotations

import collections
import copy
import functools
import logging
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .._ambiguity import Ambiguity
from .._checks._evaluate import in_evaluation
from .._checks._oracles import Check, CheckFailed, Recorded, Replay, TestCallable, annotation_oracle, judge
from .._delivery._keep import Keeper, WriteBackMode
from .._errors import RegrowError, TargetError, TestsFailedError, VerificationError
from .._events import Event, emit
from .._evidence._failure import Failure, capture_exception, check_failure, failing_frame
from .._evidence._logbuffer import pin_scope
from .._result import RepairResult
from .._target._target import Target
from ._arguments import Snapshot, put_back, take_snapshot
from ._forked import track
from ._generators import aresume, remake, rest, resume
from ._instrument import Hook, plain_target, rebound, recursing, session
from ._ledger import note as _note
from ._live import SESSIONS, SKIPPED, Running, Skip, Tally, warn_blind
from ._missing import installed
from ._options import Options
from ._switches import SWITCHES
from ._wrapper import NONE, RAISE, RETRY

log = logging.getLogger("regrow")

F = TypeVar("F", bound=Callable[..., Any])

class Healing:
    """The healing state of one decorated function: ``f.__regrow__``.

    ``results`` lists every repair session's result, newest last; ``check()`` runs the tests now;
    ``tally`` counts what the failures became (sessions run, skipped and why, fixes no oracle proved);
    ``running`` and ``join()`` tell about the session running now (docs/production.md).
    """

    def __init__(self, func: types.FunctionType, options: Options, entry: Callable[..., Any] | None = None) -> None:
        self.func = func
        self.entry = entry  # what callers call when heal stands above another decorator (see Target.entry)
        self.options = options
        self.results: list[RepairResult] = []
        self.wrapper: types.FunctionType | None = None
        self.hook: Hook | None = None  # set when the function's own code is instrumented (regrow._heal._instrument)
        self._lock = threading.Lock()
        self._target: Target | None = None
        self._regressions: list[Check] = []  # earlier failing calls a later fix must still handle
        self._cooldown: dict[str, float] = {}  # fingerprint -> time before which it is not repaired again
        self._quiet: dict[tuple[Any, ...], float] = {}  # the same, by the failing frames: checked before capture
        self._running: Running | None = None  # this function's session, when one runs: at most one at a time
        self.tally = Tally()  # what every failure became (docs/production.md)
        self._replaced: types.CodeType | None = None  # the code the last fix replaced
        self._installs = 0  # fixes installed so far: a waiting thread that sees it change calls again
        self._tried: set[str] = set()  # missing modules an install was tried for (install_missing=)
        self.keeper = Keeper(options.write_back)  # what becomes of a proven fix: heal(write_back=...)
        self._recorded: collections.deque[tuple[tuple[Any, ...], dict[str, Any], Any]] = collections.deque(
            maxlen=max(options.record, 1)
        )
        track(self)  # made fork-safe in each process forked from this one

    def ready(self) -> None:
        """Decorated (instrumented or wrapped): only now may the fleet listener, a thread, read the target. Before,
        it could make it from a function not yet instrumented, whose code never runs: no call was recorded,
        so the engine compared no candidates and installed a guess (seen with a store, on 3.11 and 3.13)."""
        self._target = None
        if self.options.store is not None and (self.options.tests or self.options.record):
            from ._fleet_listen import listen  # the repair machinery is imported when first used (issue 26)
            listen(self, self.options.store)  # a fix another process lands is proven here and installed

    @property
    def last_result(self) -> RepairResult | None:
        return self.results[-1] if self.results else None

    @property
    def ambiguous(self) -> Ambiguity | None:
        """The last session's :class:`~regrow.Ambiguity`, if its candidates disagreed and none was installed."""
        last = self.last_result
        return last.ambiguous if last is not None else None

    @property
    def running(self) -> bool:
        """Whether a repair session of this function is running now."""
        return self._running is not None

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the running session (if any) to end; whether none runs now."""
        running = self._running
        return running is None or running.done.wait(timeout)

    @property
    def mode(self) -> str:
        """How failures reach this state: ``"instrumented"`` (the function's own code) or ``"wrapped"``."""
        return "wrapped" if self.hook is None else "instrumented"

    @property
    def target(self) -> Target:
        if self._target is None:
            target = Target.of(self.func) if self.hook is None else plain_target(self.func, self.hook)
            target.entry, written = self.entry, self.keeper.written  # the file holds the last fix written back
            target.written = target.written if written in (None, target.source) else written
            self._target = target
        return self._target

    def on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                 snapshot: Snapshot | None = None) -> object:
        if SWITCHES.disabled or in_evaluation():
            return RAISE
        try:  # (an outer call through the wrapper, recursing, retries: see regrow._heal._instrument.recursing)
            decision = self._on_error(exc, args, kwargs, snapshot)
            return RAISE if decision is RETRY and self.hook is None and recursing(sys._getframe(1)) else decision
        except Exception as internal:  # a fault in regrow itself must never replace the user's error
            log.exception("healing %s failed inside regrow", self.func.__qualname__)
            _note(exc, f"regrow: healing failed inside regrow: {internal!r}")
            return RAISE

    def _on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                  snapshot: Snapshot | None) -> object:
        failing_code, key = failing_frame(exc, self.func)
        with self._lock:
            self.tally.failures += 1
            if failing_code is not None and failing_code is not self.func.__code__:
                return RETRY  # another thread installed a fix while this call was failing
            if installed(exc, self.func.__qualname__, self.options, self._tried, self.results):
                return RETRY  # a missing module was installed (install_missing=)
            running, mine = self._running, False
            if running is not None:
                self.tally.skipped["running"] += 1  # one session per function at a time: this call joins it
            elif self._quiet.get(key, 0.0) > time.monotonic():  # the bug, whatever the input: before any capture
                return self._skip("cooldown", f"{type(exc).__name__} in {self.func.__qualname__}")
            else:
                try:
                    failure = capture_exception(exc, self.func, args, kwargs)
                except Exception as capture_error:  # evidence capture must never hide the user's error
                    _note(exc, f"regrow: could not capture the failure: {capture_error!r}")
                    return RAISE
                verify, tests = self.options.verify, self.options.tests
                replay = Replay(args, kwargs, verify, annotation_oracle(self.func, verify, tests))
                started = self._start(failure, replay, exc, put_back(args, kwargs, snapshot), key, (args, kwargs))
                if isinstance(started, str):
                    return self._skip(started, failure.summary())
                running, mine = started, True
        if not self._wait(running, mine):
            _note(exc, f"regrow: the repair of {self.func.__qualname__} goes on in the background (wait="
                       f"{self.options.wait:g}s); later calls run its fix once it is proven and installed")
            return self._give_up()
        if running.internal is not None:
            log.error("healing %s failed inside regrow", self.func.__qualname__, exc_info=running.internal)
            _note(exc, f"regrow: healing failed inside regrow: {running.internal!r}")
            return RAISE
        result = running.result
        if result is not None and result.ok:
            return RETRY
        if result is not None and mine:
            _note(exc, result.ledger())
        return self._give_up()

    def on_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    snapshot: Snapshot | None = None) -> object:
        if SWITCHES.disabled or in_evaluation():
            return self._reject(value, "verify rejected the result (healing is off)")
        try:
            decision = self._on_rejected(value, args, kwargs, snapshot)
        except Exception as internal:  # a fault in regrow itself: the rejection stands, as without a repair
            log.exception("healing %s failed inside regrow", self.func.__qualname__)
            return self._reject(value, f"healing failed inside regrow: {internal!r}")
        return decision if decision is RETRY else self._reject(value, str(decision))

    def _on_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                     snapshot: Snapshot | None) -> object:
        """``RETRY`` when a fix is installed, else the reason (a string) for the rejection."""
        verify = self.options.verify
        assert verify is not None  # the wrapper only calls this with a predicate
        installs = self._installs
        reason = "verify rejected the result"
        with self._lock:
            self.tally.failures += 1
            if self._installs != installs:
                return RETRY  # another thread installed a fix while this call was being judged
            running, mine = self._running, False
            if running is not None:
                self.tally.skipped["running"] += 1
            else:
                try:
                    judge(verify, value)
                except CheckFailed as exc:
                    reason = str(exc)
                snapped = put_back(args, kwargs, snapshot)
                failure = check_failure("verify", self.func, reason, args, kwargs)
                started = self._start(failure, Replay(args, kwargs, verify), None, snapped, None, (args, kwargs))
                if isinstance(started, str):
                    self._skip(started, failure.summary())
                    return f"{reason} (no repair: {SKIPPED[started]})"
                running, mine = started, True
        if not self._wait(running, mine):
            return f"{reason} (its repair goes on in the background, past wait={self.options.wait:g}s)"
        if running.internal is not None:
            raise running.internal
        result = running.result
        if result is not None and result.ok:
            return RETRY
        return f"{reason}\n{result.ledger()}" if result is not None and mine else reason  # why, then what was tried

    def _reject(self, value: Any, reason: str) -> object:
        if self.options.on_failure == "return_none":
            return NONE
        raise VerificationError(f"{self.func.__qualname__} returned a result that verify rejected\n{reason}",
                                value, reason)

    def _give_up(self) -> object:
        return NONE if self.options.on_failure == "return_none" else RAISE

    def _skip(self, why: Skip, summary: str) -> object:
        """Count a failure that starts no session (the lock is held); what the caller gets."""
        self.tally.skipped[why] += 1
        if why == "cooldown":
            emit(self.options.on_event, Event("cooldown", self.func.__qualname__, message=summary))
        return self._give_up()

    async def aon_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                        snapshot: Snapshot | None = None) -> object:
        import asyncio  # only async targets get here, and their caller has asyncio loaded already

        pin_scope()  # the failure's log records are this task's, not the worker thread's
        return await asyncio.to_thread(self.on_error, exc, args, kwargs, snapshot)

    async def aon_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                           snapshot: Snapshot | None = None) -> object:
        import asyncio  # as in aon_error
        return await asyncio.to_thread(self.on_rejected, value, args, kwargs, snapshot)

    def before(self, *args: Any, **kwargs: Any) -> Any:
        """The generator the caller was iterating, made again (see :mod:`regrow._heal._generators`)."""
        return remake(self.func, self._replaced, args, kwargs)

    def rest(self, args: tuple[Any, ...], kwargs: dict[str, Any], exc: BaseException) -> Any:
        """An instrumented generator's caller after a fix: the rest of the fixed one (:func:`._generators.rest`)."""
        return rest(self.func, self.hook.plain if self.hook else None, self._replaced, args, kwargs, exc)

    resume, aresume, snapshot = staticmethod(resume), staticmethod(aresume), staticmethod(take_snapshot)

    def remember(self, snapshot: Snapshot | None, result: Any) -> None:
        """Keep a healthy call (``record=``): the arguments as they were passed, a copy of the result."""
        if snapshot is None:
            return  # uncopyable arguments: this call cannot be replayed faithfully
        try:
            self._recorded.append((*snapshot, copy.deepcopy(result)))
        except Exception:  # an uncopyable result
            return

    def _start(self, failure: Failure, replay: Check, exc: BaseException | None, snapshot: bool | str,
               key: tuple[Any, ...] | None, call: tuple[tuple[Any, ...], dict[str, Any]] | None,
               inline: bool | None = None) -> Running | Skip:
        """A session for ``failure``, set running (the lock is held), or why none starts.

        ``snapshot``: the arguments are the caller's as passed (``True``), or why they cannot be (a string).
        ``key``: the failing frames, kept quiet with the fingerprint when no fix is found. ``call``: the failing
        call's arguments, for the value a fix no oracle proved returns there. ``inline``: run in the caller's
        thread (default: when ``wait=None``)."""
        if self._cooldown.get(failure.fingerprint, 0.0) > time.monotonic():
            return "cooldown"
        if not SESSIONS.take(self.options.sessions_per_minute):
            log.warning("%s: no repair session for %s: %d sessions started in this process in the last minute "
                        "(heal(sessions_per_minute=...))", self.func.__qualname__, failure.summary(),
                        self.options.sessions_per_minute)
            return "cap"
        checks = [replay, *self._regressions, *(TestCallable(t) for t in self.options.tests)]
        if self._recorded:
            checks.append(Recorded(list(self._recorded)))
        self.tally.sessions += 1
        work = functools.partial(self._session, failure, replay, tuple(checks), exc, snapshot, key, call)
        running = Running(work, self._ended, inline=self.options.wait is None if inline is None else inline)
        self._running = running
        if not running.inline:
            running.start()
        return running

    def _wait(self, running: Running, mine: bool) -> bool:
        """Run the session here if it is this caller's to run inline; wait for it as ``wait=`` allows; whether it
        ended."""
        if mine and running.inline:
            running.run()
        return running.done.wait(self.options.wait)

    def _ended(self) -> None:
        with self._lock:
            self._running = None

    def _session(self, failure: Failure, replay: Check, checks: tuple[Check, ...], exc: BaseException | None,
                 snapshot: bool | str, key: tuple[Any, ...] | None,
                 call: tuple[tuple[Any, ...], dict[str, Any]] | None) -> RepairResult:
        """The session itself, through the one assembly; then what it changes for this function."""
        from ._assembly import RepairRequest  # the repair machinery: imported at the first failure (issue 26)
        from ._fleet import run_claimed
        try:
            target = self.target
        except TargetError as unreadable:  # (exec'd code): a failed session, cooled down like any other
            target, result = None, RepairResult(False, self.func.__qualname__, None, reason=f"{unreadable}")
        if target is not None:
            with session(self) as running:  # the user's code running now; a fix installed is hooked like it was
                result = run_claimed(RepairRequest(target, failure, checks, self.options, raised=exc,
                                                  snapshot=snapshot, rebind=self._rebind,
                                                  keep=functools.partial(self.keeper.proven, store=self.options.store)))
        with self._lock:
            self.results.append(result)
            if not result.ok:
                until = time.monotonic() + self.options.cooldown
                self._cooldown[failure.fingerprint] = until
                if key is not None:
                    self._quiet[key] = until
                return result
            self._took(running)
            self._regressions.append(replay)
            self._cooldown.pop(failure.fingerprint, None)
            blind = not self.options.oracle and call is not None
            if blind:
                self.tally.blind += 1
        if blind and call is not None:
            warn_blind(self.func, self.options, result, failure, *call)
        return result

    def _took(self, running: types.CodeType) -> None:
        """What an installed fix changes for the wrapper (the lock is held); ``running``: the code it replaced."""
        self._replaced = running  # what a generator's caller was iterating (see resume)
        self._target = None  # the next repair starts from the fix (regrow._target._fixed), not the code before it
        clear = getattr(self.entry, "cache_clear", None)
        if callable(clear):  # an lru_cache between heal and the def kept results of the old code
            clear()
        self._installs += 1
        if self.wrapper is not None and self.entry is None:
            self.wrapper.__defaults__, self.wrapper.__kwdefaults__ = self.func.__defaults__, self.func.__kwdefaults__

    def write_back(self, mode: WriteBackMode = "apply", *, force: bool = False) -> Path | None:
        """Keep this function's fixes as ``mode`` says from now on (``"off"``, ``"patch"``, ``"apply"``); a fix
        installed and not kept yet is kept now. Returns the backup or patch record written, if any."""
        return self.keeper.switch(mode, force)

    def _rebind(self, fn: types.FunctionType) -> None:
        """Point the wrapper (or the name) at ``fn`` (its free variables differ: ``__code__`` could not be swapped)."""
        if self.hook is not None:  # no wrapper: the fix, hooked, is put where the name is found
            rebound(fn, self.hook, self.target)
        wrapper = self.wrapper
        if self.hook is None and (wrapper is None or wrapper.__closure__ is None):
            raise RegrowError(f"cannot rebind {self.func.__qualname__}: no wrapper holds it")
        if wrapper is not None and wrapper.__closure__ is not None:
            wrapper.__closure__[wrapper.__code__.co_freevars.index("_rg_fn")].cell_contents = fn
        self.func = fn
        self._target = None

    def check(self) -> RepairResult | None:
        """Run the ``tests=`` on the function now; on a failure, repair it. ``None`` when every test passes, else
        the repair's result; raises :class:`TestsFailedError` when the tests fail and no fix was found (unless
        ``on_failure="return_none"``)."""
        tests = [TestCallable(t) for t in self.options.tests]
        if not tests:
            raise RegrowError("check() needs tests=: there is nothing to check the function against")
        for test in tests:
            try:
                test(self.func)
            except Exception as exc:
                reason = str(exc) if not isinstance(exc, AssertionError) else f"{test.name} failed"
                failure = check_failure("test", self.func, reason, exc_type=type(exc).__name__)
                result = self._check_session(failure, test)
                if (result is None or not result.ok) and self.options.on_failure == "raise":
                    raise TestsFailedError(result.ledger() if result else reason) from exc
                return result
        return None

    def _check_session(self, failure: Failure, test: Check) -> RepairResult | None:
        """A session for a failing test, run here to its end (after the one running, if any)."""
        while True:
            with self._lock:
                running = self._running
                if running is None:
                    started = self._start(failure, test, None, False, None, None, inline=True)
                    if isinstance(started, str):
                        self.tally.skipped[started] += 1
                        return None
                    break
            running.done.wait()
        started.run()
        if started.internal is not None:
            raise started.internal
        return started.result

"""A healed function's state (:class:`Healing`): what a failure, a rejected result or a failed test does.

The decorator that makes it is :mod:`._decorator`. The failure and its checks are gathered here and
handed to the one assembly (:func:`regrow._assembly.run_repair`); no repair logic lives here beyond
deciding *whether* a failure starts a repair (the cooldown) and what a fix changes for the wrapper.
"""

from __future__ import annotations

import collections
import copy
import logging
import threading
import time
import traceback
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ._assembly import RepairRequest, run_repair
from ._checks import Check, CheckFailed, Recorded, Replay, TestCallable, annotation_oracle, judge
from ._config import SWITCHES
from ._delivery import Keeper, WriteBackMode
from ._errors import RegrowError, TestsFailedError, VerificationError
from ._evaluate import in_evaluation
from ._events import Event, emit
from ._failure import Failure, capture_exception, check_failure
from ._generators import aresume, remake, resume
from ._install import installed
from ._ledger import note as _note
from ._logbuffer import pin_scope
from ._options import Options
from ._result import RepairResult
from ._snapshot import Snapshot, put_back, take_snapshot
from ._target import Target
from ._wrapper import NONE, RAISE, RETRY

log = logging.getLogger("regrow")

F = TypeVar("F", bound=Callable[..., Any])

class Healing:
    """The healing state of one decorated function: ``f.__regrow__``.

    ``results`` lists every repair session's result, newest last; ``check()`` runs the tests now.
    """

    def __init__(self, func: types.FunctionType, options: Options, entry: Callable[..., Any] | None = None) -> None:
        self.func = func
        self.entry = entry  # what callers call when heal stands above another decorator (see Target.entry)
        self.options = options
        self.results: list[RepairResult] = []
        self.wrapper: types.FunctionType | None = None
        self._lock = threading.Lock()
        self._target: Target | None = None
        self._regressions: list[Check] = []  # earlier failing calls a later fix must still handle
        self._cooldown: dict[str, float] = {}  # fingerprint -> time before which it is not repaired again
        self._replaced: types.CodeType | None = None  # the code the last fix replaced
        self._installs = 0  # fixes installed so far: a waiting thread that sees it change calls again
        self._tried: set[str] = set()  # missing modules an install was tried for (install_missing=)
        self.keeper = Keeper(options.write_back)  # what becomes of a proven fix: heal(write_back=...)
        self._recorded: collections.deque[tuple[tuple[Any, ...], dict[str, Any], Any]] = collections.deque(
            maxlen=max(options.record, 1)
        )

    @property
    def last_result(self) -> RepairResult | None:
        return self.results[-1] if self.results else None

    @property
    def target(self) -> Target:
        if self._target is None:
            self._target = Target.of(self.func)
            self._target.entry = self.entry
        return self._target

    # -- the decisions the wrapper asks for -------------------------------------------------
    def on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                 snapshot: Snapshot | None = None) -> object:
        if SWITCHES.disabled or in_evaluation():
            return RAISE
        try:
            return self._on_error(exc, args, kwargs, snapshot)
        except Exception as internal:  # a fault in regrow itself must never replace the user's error
            log.exception("healing %s failed inside regrow", self.func.__qualname__)
            _note(exc, f"regrow: healing failed inside regrow: {internal!r}")
            return RAISE

    def _on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                  snapshot: Snapshot | None) -> object:
        failing_code = _failing_code(exc, self.func)
        with self._lock:
            if failing_code is not None and failing_code is not self.func.__code__:
                return RETRY  # another thread installed a fix while this call was failing
            if installed(exc, self.func.__qualname__, self.options, self._tried, self.results):
                return RETRY  # a missing module was installed (install_missing=)
            try:
                failure = capture_exception(exc, self.func, args, kwargs)
            except Exception as capture_error:  # evidence capture must never hide the user's error
                _note(exc, f"regrow: could not capture the failure: {capture_error!r}")
                return RAISE
            verify, tests = self.options.verify, self.options.tests
            replay = Replay(args, kwargs, verify, annotation_oracle(self.func, verify, tests))
            result = self._repair(failure, replay, exc, put_back(args, kwargs, snapshot))
        if result is None or not result.ok:
            if result is not None:
                _note(exc, result.ledger())
            return NONE if self.options.on_failure == "return_none" else RAISE
        return RETRY

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
        with self._lock:
            if self._installs != installs:
                return RETRY  # another thread installed a fix while this call was being judged
            try:
                judge(verify, value)
                reason = "verify rejected the result"
            except CheckFailed as exc:
                reason = str(exc)
            snapped = put_back(args, kwargs, snapshot)
            replay = Replay(args, kwargs, verify)
            failure = check_failure("verify", self.func, reason, args, kwargs)
            result = self._repair(failure, replay, None, snapped)
        if result is not None and result.ok:
            return RETRY
        return result.ledger() if result is not None else reason

    def _reject(self, value: Any, reason: str) -> object:
        if self.options.on_failure == "return_none":
            return NONE
        raise VerificationError(f"{self.func.__qualname__} returned a result that verify rejected\n{reason}",
                                value, reason)

    async def aon_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any],
                        snapshot: Snapshot | None = None) -> object:
        import asyncio  # only async targets get here, and their caller has asyncio loaded already

        pin_scope()  # the failure's log records are this task's, not the worker thread's
        return await asyncio.to_thread(self.on_error, exc, args, kwargs, snapshot)

    async def aon_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                           snapshot: Snapshot | None = None) -> object:
        import asyncio

        return await asyncio.to_thread(self.on_rejected, value, args, kwargs, snapshot)

    def before(self, *args: Any, **kwargs: Any) -> Any:
        """The generator the caller was iterating, made again (see :mod:`regrow._generators`)."""
        return remake(self.func, self._replaced, args, kwargs)

    resume = staticmethod(resume)
    aresume = staticmethod(aresume)

    snapshot = staticmethod(take_snapshot)

    def remember(self, snapshot: Snapshot | None, result: Any) -> None:
        """Keep a healthy call (``record=``): the arguments as they were passed, a copy of the result."""
        if snapshot is None:
            return  # uncopyable arguments: this call cannot be replayed faithfully
        try:
            self._recorded.append((*snapshot, copy.deepcopy(result)))
        except Exception:  # an uncopyable result
            return

    # -- repair ------------------------------------------------------------------------------
    def _repair(self, failure: Failure, replay: Check, exc: BaseException | None = None,
                snapshot: bool | str = False) -> RepairResult | None:
        """Run a session for ``failure`` unless it is cooling down or may not run; the lock is held.

        ``snapshot``: the arguments are the caller's as passed (``True``), or why they cannot be (a string).
        """
        fingerprint = failure.fingerprint
        now = time.monotonic()
        if self._cooldown.get(fingerprint, 0.0) > now:
            emit(self.options.on_event, Event("cooldown", self.func.__qualname__, message=failure.summary()))
            return None
        checks = [replay, *self._regressions, *(TestCallable(t) for t in self.options.tests)]
        if self._recorded:
            checks.append(Recorded(list(self._recorded)))
        running = self.func.__code__
        result = run_repair(RepairRequest(self.target, failure, tuple(checks), self.options, raised=exc,
                                          snapshot=snapshot, rebind=self._rebind, keep=self._keep))
        self.results.append(result)
        if result.ok:
            self._replaced = running  # what a generator's caller was iterating (see resume)
            clear = getattr(self.entry, "cache_clear", None)
            if callable(clear):  # an lru_cache between heal and the def kept results of the old code
                clear()
            self._installs += 1
            self._regressions.append(replay)
            self._cooldown.pop(fingerprint, None)
            if self.wrapper is not None and self.entry is None:
                self.wrapper.__defaults__ = self.func.__defaults__
                self.wrapper.__kwdefaults__ = self.func.__kwdefaults__
        else:
            self._cooldown[fingerprint] = now + self.options.cooldown
        return result

    def _keep(self, target: Target, result: RepairResult, checks: Sequence[Check]) -> None:
        self.keeper.proven(target, result, checks, self.options.store)

    def write_back(self, mode: WriteBackMode = "apply", *, force: bool = False) -> Path | None:
        """Keep this function's fixes as ``mode`` says from now on (``"off"``, ``"patch"``, ``"apply"``); a fix
        installed and not kept yet is kept now. Returns the backup or patch record written, if any."""
        return self.keeper.switch(mode, force)

    def _rebind(self, fn: types.FunctionType) -> None:
        """Point the wrapper at ``fn`` (its free variables differ, so ``__code__`` could not be swapped)."""
        wrapper = self.wrapper
        if wrapper is None or wrapper.__closure__ is None:
            raise RegrowError(f"cannot rebind {self.func.__qualname__}: no wrapper holds it")
        index = wrapper.__code__.co_freevars.index("_rg_fn")
        wrapper.__closure__[index].cell_contents = fn
        self.func = fn
        self._target = None

    def check(self) -> RepairResult | None:
        """Run the ``tests=`` on the function now; on a failure, repair it.

        Returns ``None`` when every test passes, else the repair's result; raises
        :class:`TestsFailedError` when the tests fail and no fix was found (unless
        ``on_failure="return_none"``).
        """
        tests = [TestCallable(t) for t in self.options.tests]
        if not tests:
            raise RegrowError("check() needs tests=: there is nothing to check the function against")
        for test in tests:
            try:
                test(self.func)
            except Exception as exc:
                reason = str(exc) if not isinstance(exc, AssertionError) else f"{test.name} failed"
                failure = check_failure("test", self.func, reason, exc_type=type(exc).__name__)
                with self._lock:
                    result = self._repair(failure, test)
                if (result is None or not result.ok) and self.options.on_failure == "raise":
                    raise TestsFailedError(result.ledger() if result else reason) from exc
                return result
        return None


def _failing_code(exc: BaseException, func: types.FunctionType) -> types.CodeType | None:
    """The code object of ``func``'s frame in the traceback (the code that actually failed)."""
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if code.co_name == func.__name__ and getattr(code, "co_qualname", func.__qualname__) == func.__qualname__:
            found = code
    return found

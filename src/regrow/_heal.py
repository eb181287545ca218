"""The front-ends: the ``@heal`` decorator and ``repair()`` for one call.

They only assemble the parts (target, failure, checks, proposers, sandbox, session); no repair
logic lives here beyond deciding *whether* a failure starts a session.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import functools
import inspect
import logging
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from ._chain import default_chain
from ._checks import (
    Check,
    CheckFailed,
    Preserves,
    Recorded,
    Replay,
    TestCallable,
    _run_coroutine,
    in_evaluation,
    judge,
    original_results,
    return_annotation,
)
from ._config import SWITCHES
from ._engine import Engine
from ._errors import RegrowError, TestsFailedError, VerificationError
from ._events import Event, EventHandler, emit
from ._failure import Failure, capture_exception, check_failure
from ._proposer import Proposer
from ._sandbox import Limits, Sandbox, make_sandbox
from ._sandbox import default_sandbox as platform_sandbox
from ._session import Budget, RepairResult, Session
from ._store import CacheProposer, Store
from ._target import Target, refusal, unwrap
from ._wrapper import NONE, RAISE, RETRY, make_wrapper

log = logging.getLogger("regrow")

F = TypeVar("F", bound=Callable[..., Any])
OnFailure = Literal["raise", "return_none"]
SandboxMode = Literal["fork", "inprocess", "pool"]
Test = Callable[[Callable[..., Any]], object]

_shared_sandbox: Sandbox | None = None
_sandbox_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox used when none is given: a guarded fork where the platform has one."""
    global _shared_sandbox
    with _sandbox_lock:
        if _shared_sandbox is None:
            _shared_sandbox = platform_sandbox()
        return _shared_sandbox


@dataclasses.dataclass(frozen=True)
class Options:
    """Everything ``@heal`` and ``repair()`` are configured with (see :func:`heal`)."""

    verify: Callable[[Any], object] | None = None
    tests: tuple[Test, ...] = ()
    proposers: tuple[Proposer, ...] | None = None
    sandbox: Sandbox | None = None
    budget: Budget = dataclasses.field(default_factory=Budget)
    on_failure: OnFailure = "raise"
    on_event: tuple[EventHandler, ...] = ()
    cooldown: float = 300.0
    store: Store | None = None
    record: int = 0

    def chain(self) -> tuple[Proposer, ...]:
        """The proposers in order: the cache (with a store), then the given ones or the engine."""
        chosen = self.proposers if self.proposers is not None else (Engine(),)
        return (CacheProposer(self.store), *chosen) if self.store is not None else chosen


class Healing:
    """The healing state of one decorated function: ``f.__regrow__``.

    ``results`` lists every repair session's result, newest last; ``check()`` runs the tests now.
    """

    def __init__(self, func: types.FunctionType, options: Options) -> None:
        self.func = func
        self.options = options
        self.results: list[RepairResult] = []
        self.wrapper: types.FunctionType | None = None
        self._lock = threading.Lock()
        self._target: Target | None = None
        self._regressions: list[Check] = []  # earlier failing calls a later fix must still handle
        self._cooldown: dict[str, float] = {}  # fingerprint -> time before which it is not repaired again
        self._installs = 0  # fixes installed so far: a waiting thread that sees it change calls again
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
        return self._target

    # -- the decisions the wrapper asks for -------------------------------------------------
    def on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        if SWITCHES.disabled or in_evaluation():
            return RAISE
        try:
            return self._on_error(exc, args, kwargs)
        except Exception as internal:  # a fault in regrow itself must never replace the user's error
            log.exception("regrow: healing %s failed inside regrow", self.func.__qualname__)
            _note(exc, f"regrow: healing failed inside regrow: {internal!r}")
            return RAISE

    def _on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        failing_code = _failing_code(exc, self.func)
        with self._lock:
            if failing_code is not None and failing_code is not self.func.__code__:
                return RETRY  # another thread installed a fix while this call was failing
            try:
                failure = capture_exception(exc, self.func, args, kwargs)
            except Exception as capture_error:  # evidence capture must never hide the user's error
                _note(exc, f"regrow: could not capture the failure: {capture_error!r}")
                return RAISE
            verify, tests = self.options.verify, self.options.tests
            replay = Replay(args, kwargs, verify, _annotation_oracle(self.func, verify, tests))
            result = self._repair(failure, replay)
        if result is None or not result.ok:
            if result is not None:
                _note(exc, result.ledger())
            return NONE if self.options.on_failure == "return_none" else RAISE
        return RETRY

    def on_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        if SWITCHES.disabled or in_evaluation():
            return self._reject(value, "verify rejected the result (healing is off)")
        try:
            decision = self._on_rejected(value, args, kwargs)
        except Exception as internal:  # a fault in regrow itself: the rejection stands, as without a repair
            log.exception("regrow: healing %s failed inside regrow", self.func.__qualname__)
            return self._reject(value, f"healing failed inside regrow: {internal!r}")
        return decision if decision is RETRY else self._reject(value, str(decision))

    def _on_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
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
            replay = Replay(args, kwargs, verify)
            failure = check_failure("verify", self.func, reason, args, kwargs)
            result = self._repair(failure, replay)
        if result is not None and result.ok:
            return RETRY
        return result.ledger() if result is not None else reason

    def _reject(self, value: Any, reason: str) -> object:
        if self.options.on_failure == "return_none":
            return NONE
        raise VerificationError(f"{self.func.__qualname__} returned a result that verify rejected\n{reason}",
                                value, reason)

    async def aon_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        import asyncio  # only async targets get here, and their caller has asyncio loaded already

        return await asyncio.to_thread(self.on_error, exc, args, kwargs)

    async def aon_rejected(self, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        import asyncio

        return await asyncio.to_thread(self.on_rejected, value, args, kwargs)

    def remember(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """Keep a healthy call (``record=``): copies, so later mutation cannot change the record."""
        try:
            self._recorded.append(copy.deepcopy((args, kwargs, result)))
        except Exception:  # uncopyable arguments or result: this call cannot be replayed faithfully
            return

    # -- repair ------------------------------------------------------------------------------
    def _repair(self, failure: Failure, replay: Check) -> RepairResult | None:
        """Run a session for ``failure`` unless it is cooling down; the lock is held."""
        fingerprint = failure.fingerprint
        now = time.monotonic()
        if self._cooldown.get(fingerprint, 0.0) > now:
            emit(self.options.on_event, Event("cooldown", self.func.__qualname__, message=failure.summary()))
            return None
        checks = [replay, *self._regressions, *(TestCallable(t) for t in self.options.tests)]
        if self._recorded:
            checks.append(Recorded(list(self._recorded)))
        sandbox = self.options.sandbox or default_sandbox()
        if self.options.verify is None and not self.options.tests and not self._recorded:
            guard = _preserves(self.target, failure, sandbox)
            if guard is not None:
                checks.append(guard)
        session = Session(
            self.target, failure, checks, self.options.chain(),
            sandbox=sandbox,
            budget=self.options.budget,
            on_event=self.options.on_event,
            rebind=self._rebind,
            store=self.options.store,
        )
        result = session.run(install=True)
        self.results.append(result)
        if result.ok:
            self._installs += 1
            self._regressions.append(replay)
            self._cooldown.pop(fingerprint, None)
            if self.wrapper is not None:
                self.wrapper.__defaults__ = self.func.__defaults__
                self.wrapper.__kwdefaults__ = self.func.__kwdefaults__
        else:
            self._cooldown[fingerprint] = now + self.options.cooldown
        return result

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


def _annotation_oracle(func: types.FunctionType, verify: object, tests: Sequence[Test]) -> Any:
    """The return annotation, used as an oracle only where the user gave none of their own."""
    return inspect.Parameter.empty if verify is not None or tests else return_annotation(func)


def _preserves(target: Target, failure: Failure, sandbox: Sandbox) -> Preserves | None:
    """The guard of the no-oracle case (no ``verify=``, ``tests=`` or ``record=``): see :class:`Preserves`.

    The original's results on variations of the failing call are found once, in the sandbox (the
    original may have side effects, or hang on a variation); where that fails there is no guard.
    """
    from ._engine._inputs import Call, derive

    calls = [(c.args, c.kwargs) for c in derive([Call(tuple(failure.args), dict(failure.kwargs))], limit=24)]
    if len(calls) < 2:
        return None
    outcome = sandbox.call(original_results, target, calls, limits=Limits(timeout=2.0))
    if not outcome.ok or not isinstance(outcome.value, list) or len(outcome.value) != len(calls):
        return None
    return Preserves(calls, outcome.value)


def _failing_code(exc: BaseException, func: types.FunctionType) -> types.CodeType | None:
    """The code object of ``func``'s frame in the traceback (the code that actually failed)."""
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if code.co_name == func.__name__ and getattr(code, "co_qualname", func.__qualname__) == func.__qualname__:
            found = code
    return found


def ledger_of(exc: BaseException) -> str:
    """What regrow attached to ``exc`` when it could not repair it ("" when nothing): the notes on
    3.11+, the ``__regrow_ledger__`` attribute on 3.10. Works the same on every version."""
    notes = [note for note in getattr(exc, "__notes__", ()) if isinstance(note, str) and note.startswith("regrow")]
    return "\n".join(notes) if notes else str(getattr(exc, "__regrow_ledger__", ""))


def _note(exc: BaseException, text: str) -> None:
    """Attach ``text`` to the user's exception: a note on 3.11+, ``__regrow_ledger__`` on 3.10."""
    if sys.version_info >= (3, 11):
        exc.add_note(text)
    else:
        previous = getattr(exc, "__regrow_ledger__", "")
        with contextlib.suppress(Exception):  # exceptions with __slots__ cannot take the attribute
            exc.__regrow_ledger__ = f"{previous}\n{text}" if previous else text  # type: ignore[attr-defined]


def _options(
    *,
    verify: Callable[[Any], object] | None,
    tests: Sequence[Test],
    proposers: Sequence[Proposer] | None,
    model: str | None,
    sandbox: Sandbox | SandboxMode | None,
    max_candidates: int,
    max_attempts: int,
    timeout: float,
    candidate_timeout: float,
    on_failure: OnFailure,
    on_event: EventHandler | Sequence[EventHandler] | None,
    cooldown: float,
    store: str | Path | Store | None,
    record: int = 0,
) -> Options:
    if on_failure not in ("raise", "return_none"):
        raise ValueError(f"on_failure must be 'raise' or 'return_none', not {on_failure!r}")
    if verify is not None and not callable(verify):
        raise TypeError("verify= must be a callable that takes the result and returns True to accept it")
    for test in tests:
        if not callable(test):
            raise TypeError(f"tests= must hold callables that take the function; got {test!r}")
    handlers = () if on_event is None else (on_event,) if callable(on_event) else tuple(on_event)
    budget = Budget(max_candidates=max_candidates, max_attempts=max_attempts, timeout=timeout,
                    candidate_timeout=candidate_timeout)
    if store is not None and not isinstance(store, Store):
        store = Store(store)
    if isinstance(sandbox, str):
        sandbox = make_sandbox(sandbox)
    if model is not None:
        if proposers is not None:
            raise ValueError("give proposers= or model=, not both (model= is the engine, then that model)")
        proposers = default_chain(model)
    if record < 0:
        raise ValueError("record= is how many healthy calls to keep; it cannot be negative")
    return Options(verify, tuple(tests), tuple(proposers) if proposers is not None else None, sandbox, budget,
                   on_failure, handlers, cooldown, store, record)


@overload
def heal(func: F, /) -> F: ...
@overload
def heal(
    *,
    verify: Callable[[Any], object] | None = None,
    tests: Sequence[Test] = (),
    proposers: Sequence[Proposer] | None = None,
    model: str | None = None,
    sandbox: Sandbox | SandboxMode | None = None,
    max_candidates: int = 2000,
    max_attempts: int = 3,
    timeout: float = 60.0,
    candidate_timeout: float = 2.0,
    on_failure: OnFailure = "raise",
    on_event: EventHandler | Sequence[EventHandler] | None = None,
    cooldown: float = 300.0,
    store: str | Path | Store | None = None,
    record: int = 0,
) -> Callable[[F], F]: ...
def heal(
    func: Any = None,
    /,
    *,
    verify: Callable[[Any], object] | None = None,
    tests: Sequence[Test] = (),
    proposers: Sequence[Proposer] | None = None,
    model: str | None = None,
    sandbox: Sandbox | SandboxMode | None = None,
    max_candidates: int = 2000,
    max_attempts: int = 3,
    timeout: float = 60.0,
    candidate_timeout: float = 2.0,
    on_failure: OnFailure = "raise",
    on_event: EventHandler | Sequence[EventHandler] | None = None,
    cooldown: float = 300.0,
    store: str | Path | Store | None = None,
    record: int = 0,
) -> Any:
    """Heal a function when it fails: repair it, prove the repair, and install it for every caller.

    A call that raises (an ``Exception``, not ``KeyboardInterrupt``/``SystemExit``), or whose
    result ``verify`` does not accept, starts a repair session; a proven fix replaces the live
    function's code and the call is run again. When no fix is found the original exception
    propagates unchanged, with the attempt ledger attached as a note.

    - ``verify``: a predicate on the result; it passes by returning a true value (``None`` fails).
    - ``tests``: callables that take the function and raise ``AssertionError`` when it is wrong;
      every fix must pass them. They run during repair and in ``f.__regrow__.check()``, never on
      healthy calls.
    - ``proposers``: the chain of proposers, tried in order (default: the built-in engine).
    - ``model``: a model string (``"openai:gpt-5"``, ``"anthropic:claude-sonnet-4-5"``,
      ``"ollama:qwen2.5-coder:7b"``…) to try after the engine; see ``docs/llm.md``. A missing SDK
      or key is an error here, at decoration, not at the first failure.
    - ``sandbox``: where candidates are proven: ``"fork"`` (the default on Linux and macOS: a
      guarded child process with the live state), ``"inprocess"`` (fastest, time limit only),
      ``"pool"``, or a :class:`Sandbox`. See ``docs/sandbox.md`` for what each protects against.
    - ``max_candidates``, ``max_attempts``, ``timeout``, ``candidate_timeout``: the budget.
    - ``on_failure``: ``"raise"`` (default) or ``"return_none"`` when no fix is found.
    - ``on_event``: callbacks that receive each :class:`Event`.
    - ``cooldown``: seconds before a failure that could not be repaired is tried again.
    - ``store``: a SQLite file (or :class:`Store`) for the repair cache and the attempt ledger; a
      failure fixed before is fixed from the cache (still proven by the checks) with no search.
    - ``record``: keep the last ``record`` healthy calls (deep copies of arguments and result);
      a fix must return the same results for them. Off by default: it costs time on every healthy
      call, and it assumes the results returned without a failure were right.

    Refuses (``TargetError``), at decoration, what it cannot heal: lambdas, functions nested in
    other functions, generators, builtins. With healing disabled the function is returned as is.
    """
    options = _options(
        verify=verify, tests=tests, proposers=proposers, model=model, sandbox=sandbox, max_candidates=max_candidates,
        max_attempts=max_attempts, timeout=timeout, candidate_timeout=candidate_timeout, on_failure=on_failure,
        on_event=on_event, cooldown=cooldown, store=store, record=record,
    )

    def decorate(fn: Any) -> Any:
        if SWITCHES.disabled or getattr(fn, "__regrow__", None) is not None:
            return fn  # off, or healed already: a second decorator must not nest a second loop
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(decorate(fn.__func__))
        raw = unwrap(fn)
        if raw is not fn:
            raise RegrowError(f"heal must be the innermost decorator of {raw.__qualname__} "
                              "(apply it directly to the def)")
        reason = refusal(raw)
        if reason:
            raise RegrowError(reason)
        state = Healing(raw, options)
        wrapper = make_wrapper(raw, state, options.verify, record=options.record > 0)
        functools.update_wrapper(wrapper, raw)
        wrapper.__regrow__ = state  # type: ignore[attr-defined]
        state.wrapper = wrapper
        return wrapper

    return decorate(func) if func is not None else decorate


def state(func: Callable[..., Any]) -> Healing:
    """The :class:`Healing` state of a function decorated with :func:`heal`."""
    found = getattr(func, "__regrow__", None)
    if not isinstance(found, Healing):
        raise RegrowError(f"{func!r} is not decorated with regrow.heal")
    return found


def repair(
    func: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    tests: Sequence[Test] = (),
    verify: Callable[[Any], object] | None = None,
    proposers: Sequence[Proposer] | None = None,
    model: str | None = None,
    sandbox: Sandbox | SandboxMode | None = None,
    max_candidates: int = 2000,
    max_attempts: int = 3,
    timeout: float = 60.0,
    candidate_timeout: float = 2.0,
    on_event: EventHandler | Sequence[EventHandler] | None = None,
    install: bool = True,
    store: str | Path | Store | None = None,
) -> RepairResult:
    """Call ``func(*args, **kwargs)`` once and, if it fails, repair it.

    Returns a :class:`RepairResult`: ``ok`` with ``value`` set to what the (repaired) call
    returned, or not ``ok`` with the reason. With ``install`` (the default) a fix is installed
    into the live function. Coroutine functions are run with ``asyncio.run``.
    """
    options = _options(
        verify=verify, tests=tests, proposers=proposers, model=model, sandbox=sandbox, max_candidates=max_candidates,
        max_attempts=max_attempts, timeout=timeout, candidate_timeout=candidate_timeout, on_failure="raise",
        on_event=on_event, cooldown=0.0, store=store,
    )
    raw = unwrap(func)
    args, kwargs = tuple(args), dict(kwargs or {})
    replay = Replay(args, kwargs, verify, _annotation_oracle(raw, verify, tests))
    checks: list[Check] = [replay, *(TestCallable(t) for t in tests)]
    failure = _first_failure(raw, checks, args, kwargs)
    if failure is None:
        return RepairResult(True, raw.__qualname__, None, reason="nothing to repair: every check passed",
                            value=_run(raw, args, kwargs))
    target, sandbox_used = Target.of(raw), options.sandbox or default_sandbox()
    if verify is None and not tests:
        guard = _preserves(target, failure, sandbox_used)
        if guard is not None:
            checks.append(guard)
    session = Session(target, failure, checks, options.chain(), sandbox=sandbox_used, budget=options.budget,
                      on_event=options.on_event, store=options.store)
    result = session.run(install=install)
    if result.ok and install:
        result.value = _run(raw, args, kwargs)
    return result


def _first_failure(raw: types.FunctionType, checks: Sequence[Check], args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Failure | None:
    """Run the checks on the function as it is; the first failure, or ``None`` when all pass."""
    for check in checks:
        try:
            check(raw)
        except CheckFailed as exc:
            return check_failure("verify" if check is checks[0] else "test", raw, str(exc), args, kwargs)
        except Exception as exc:  # the function itself raised
            return capture_exception(exc, raw, args, kwargs)
    return None


def _run(raw: types.FunctionType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    value = raw(*args, **kwargs)
    return _run_coroutine(value) if inspect.iscoroutine(value) else value

"""The front-ends: the ``@heal`` decorator and ``repair()`` for one call.

They only assemble the parts (target, failure, checks, proposers, sandbox, session); no repair
logic lives here beyond deciding *whether* a failure starts a session.
"""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import logging
import threading
import time
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from ._checks import Check, CheckFailed, Recorded, Replay, TestCallable, annotation_oracle, judge
from ._config import SWITCHES
from ._delivery import Keeper, WriteBackMode
from ._errors import RegrowError, TestsFailedError, VerificationError
from ._evaluate import in_evaluation
from ._events import Event, EventHandler, emit
from ._failure import Failure, capture_exception, check_failure
from ._generators import aresume, remake, resume
from ._install import installed
from ._ledger import note as _note
from ._ledger import refused_result
from ._logbuffer import pin_scope
from ._options import OnFailure, Options, SandboxMode, Test, default_sandbox, make_options
from ._policy import prepare
from ._proposer import Proposer
from ._sandbox import Sandbox
from ._session import RepairResult, Session
from ._snapshot import Snapshot, put_back, take_snapshot
from ._source import snapshot
from ._store import Store
from ._target import Target
from ._unwrap import refusal, unwrap
from ._wrapper import NONE, RAISE, RETRY, make_wrapper

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
        sandbox = self.options.sandbox or default_sandbox()
        oracle = self.options.oracle
        refused = snapshot if isinstance(snapshot, str) else ""
        if not refused:
            checks, refused = prepare(self.target, failure, exc, checks, sandbox, oracle=oracle,
                                      snapshot=snapshot is True)
        if refused:
            result = refused_result(self.target.qualname, failure, refused, self.options)
            self.results.append(result)
            self._cooldown[fingerprint] = now + self.options.cooldown
            return result
        running = self.func.__code__
        session = Session(
            self.target, failure, checks, self.options.chain(),
            sandbox=sandbox,
            budget=self.options.budget,
            on_event=self.options.on_event,
            rebind=self._rebind,
            store=self.options.store,
            oracle=oracle,
        )
        result = session.run(install=True)
        self.results.append(result)
        if result.ok:
            self.keeper.proven(session.target, result, session.checks, self.options.store)
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
    write_back: WriteBackMode = "off",
    install_missing: bool = False, allow_install: Mapping[str, str] | None = None,
    jobs: int | None = None,
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
    write_back: WriteBackMode = "off",
    install_missing: bool = False, allow_install: Mapping[str, str] | None = None,
    jobs: int | None = None,
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
      or a :class:`Sandbox` (``"pool"`` is refused: it cannot hold the live target). See ``docs/sandbox.md``.
    - ``max_candidates``, ``max_attempts``, ``timeout``, ``candidate_timeout``: the budget.
    - ``jobs``: warm workers judging the engine's candidates at once (default: every core); the
      patches found are the same whatever the number.
    - ``on_failure``: ``"raise"`` (default) or ``"return_none"`` when no fix is found.
    - ``on_event``: callbacks that receive each :class:`Event`.
    - ``cooldown``: seconds before a failure that could not be repaired is tried again.
    - ``store``: a SQLite file (or :class:`Store`) for the repair cache and the attempt ledger; a
      failure fixed before is fixed from the cache (still proven by the checks) with no search.
    - ``record``: keep the last ``record`` healthy calls (deep copies of arguments and result);
      a fix must return the same results for them. Off by default: it costs time on every healthy
      call, and it assumes the results returned without a failure were right.
    - ``write_back``: what a proven fix is kept as besides the live code: ``"off"`` (default),
      ``"patch"`` (a patch and its provenance in ``.regrow/patches``), ``"apply"`` (the file). See docs/delivery.md.
    - ``install_missing``, ``allow_install``: on a ``ModuleNotFoundError`` inside it, install the pinned requirement
      ``allow_install`` names (``{"yaml": "PyYAML==6.0.2"}``) into the active venv and call again (docs/agents.md).

    Refuses (``TargetError``), at decoration, what it cannot heal: lambdas, functions nested in
    other functions, generators, builtins. With healing disabled the function is returned as is.
    """
    options = make_options(
        verify=verify, tests=tests, proposers=proposers, model=model, sandbox=sandbox, max_candidates=max_candidates,
        max_attempts=max_attempts, timeout=timeout, candidate_timeout=candidate_timeout, on_failure=on_failure,
        on_event=on_event, cooldown=cooldown, store=store, record=record, write_back=write_back,
        install_missing=install_missing, allow_install=allow_install, jobs=jobs,
    )

    def decorate(fn: Any) -> Any:
        if SWITCHES.disabled or getattr(fn, "__regrow__", None) is not None:
            return fn  # off, or healed already: a second decorator must not nest a second loop
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(decorate(fn.__func__))
        if isinstance(fn, property):
            raise RegrowError("heal cannot stand above @property (the class attribute must stay a property): put "
                              "@regrow.heal below it, directly above the def")
        raw = unwrap(fn)
        reason = refusal(raw)
        if reason:
            raise RegrowError(reason)
        entry = None if raw is fn else fn  # heal above another decorator: calls go through it, to the def
        if entry is not None and raw.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
            raise RegrowError(f"heal above another decorator of the generator {raw.__qualname__} cannot see the "
                              "failures of its iteration: put @regrow.heal directly above the def")
        snapshot(raw)  # the file as it is at import: the code that runs is the code regrow heals
        state = Healing(raw, options, entry)
        wrapper = make_wrapper(raw, state, options.verify, record=options.record > 0, callee=entry)
        functools.update_wrapper(wrapper, fn)
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

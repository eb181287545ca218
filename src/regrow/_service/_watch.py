"""``regrow.watch("package")``: heal the functions of your own package when they raise, with no decorator.

When an exception leaves the user's code (see :mod:`._watch_hooks`), the innermost frame of the
user's code in its traceback is the function that failed: its arguments are taken from that frame
(:func:`._watch_scope.arguments`) and a :class:`~._watch_repair.Job` goes to the worker thread
(:mod:`._watch_repair`). The raising call is not slowed by the search and gets its exception
unchanged; later calls run the fix once it is proven and installed. A fix no oracle proved is not
installed unless ``allow_blind=True``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import logging
import os
import threading
import time
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._checks._evaluate import in_evaluation
from .._errors import RegrowError
from .._heal._options import HealOptions, Options, RepairOptions, Test, make_options
from .._sandbox._afterfork import regrow_child
from .._settings import current
from ._watch_hooks import MonitoringHook, WrappingHook, make_hook
from ._watch_repair import Job, Worker
from ._watch_scope import Scope, arguments, innermost

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger("regrow")

# The jobs of the failures seen while a request runs (set by the middleware; None elsewhere).
COLLECTOR: contextvars.ContextVar[list[Job] | None] = contextvars.ContextVar("regrow_watch_jobs", default=None)


class Watcher:
    """What ``watch()`` started: the scope, the hook and the worker. ``jobs`` lists finished repairs."""

    def __init__(self, scope: Scope, base: Options, tests: Mapping[str, Sequence[Test]],
                 verify: Mapping[str, Callable[[Any], object]], allow_blind: bool) -> None:
        self.scope = scope
        self.base = base
        self.tests = {name: tuple(found) for name, found in tests.items()}
        self.verify = dict(verify)
        self.worker = Worker(self.options_for, allow_blind, scope.covers_function)
        self.hook: MonitoringHook | WrappingHook = make_hook(scope, self.escaped)
        self.forked = False  # this process is a child the worker's sandbox forked: it watches nothing

    @property
    def jobs(self) -> list[Job]:
        return list(self.worker.history)

    def options_for(self, func: types.FunctionType) -> Options:
        """The options ``func`` is repaired with: the watch's, with its own tests and verify."""
        name = f"{func.__module__}.{func.__qualname__}"
        return dataclasses.replace(self.base, tests=self.tests.get(name, ()), verify=self.verify.get(name))

    def escaped(self, exc: BaseException) -> None:
        """An exception left the user's code: hand its innermost user frame to the worker. Runs in the
        raising thread, as the exception leaves, so it takes only what it must (the arguments, copied)."""
        if self.forked or in_evaluation() or threading.get_ident() == self.worker.ident:
            return  # a candidate's or a check's failure, or one in a sandbox's child
        frame = innermost(exc.__traceback__, self.scope)
        if frame is None:
            return
        code = frame.f_code
        key = (code, type(exc), frame.f_lineno)
        job = self.worker.pending(code)
        if job is None and self.worker.quiet(key):
            return
        if job is None:
            captured = arguments(frame)
            module = frame.f_globals.get("__name__", "?")
            name = f"{module}.{getattr(code, 'co_qualname', code.co_name)}"
            job = Job(name, code, frame.f_globals, exc, key=key)
            if isinstance(captured, str):
                job.refused = captured
            else:
                job.args, job.kwargs = captured
            job = self.worker.submit(job)
            log.info("regrow watch: %s raised %s; repairing it in the background", name, type(exc).__name__)
        collected = COLLECTOR.get()
        if collected is not None:
            collected.append(job)

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the repairs queued so far; whether they all ended (and are in
        :attr:`jobs`: a job is finished a moment before the worker records it)."""
        until = time.monotonic() + timeout
        with self.worker._lock:
            pending = list(self.worker._pending.values())
        if not all(job.wait(max(0.0, until - time.monotonic())) for job in pending):
            return False
        while True:
            with self.worker._lock:
                recorded = not any(self.worker._pending.get(job.code) is job for job in pending)
            if recorded or time.monotonic() >= until:
                return recorded
            time.sleep(0.005)


_current: Watcher | None = None
_lock = threading.Lock()


def watch(
    *packages: str,
    folders: Sequence[str | Path] = (),
    tests: Mapping[str, Sequence[Test]] | None = None,
    verify: Mapping[str, Callable[[Any], object]] | None = None,
    allow_blind: bool | None = None,
    cooldown: float | None = None,
    **options: Unpack[RepairOptions],
) -> Watcher:
    """Heal the functions of ``packages`` (and of the files under ``folders``) when they raise.

    Only the user's own code is watched: a function whose module is one of ``packages`` or inside
    one (or whose file is under ``folders``), from a file outside the standard library and
    site-packages. An exception that leaves that code starts a repair of the innermost of its
    functions in the traceback, in a background thread; the raising call gets its exception.

    - ``tests``, ``verify``: the oracles, per function, keyed ``"module.qualname"``
      (``{"shop.prices.parse_qty": [test_parse]}``); as in :func:`regrow.heal`.
    - ``allow_blind``: install fixes proven without an oracle too (crash guards whose value where the
      call failed nothing checked). Off: such a fix is logged at WARNING and not installed. ``None``: the
      configuration's ``allow_blind`` (docs/configuration.md), off by default.
    - ``cooldown`` (per failure fingerprint) and the rest (:class:`RepairOptions`): as in :func:`regrow.heal`.

    One watch at a time: a second call replaces the first. Returns the :class:`Watcher`.
    """
    global _current
    tests, verify = dict(tests or {}), dict(verify or {})
    for name, predicate in verify.items():
        if not callable(predicate):
            raise TypeError(f"verify[{name!r}] must be a callable that takes the result")
    every_test = [test for found in tests.values() for test in found]
    given = cast(HealOptions, {**options, "verify": None, "tests": every_test, "on_failure": "raise"})
    if cooldown is not None:
        given["cooldown"] = cooldown
    base = make_options(**given)
    blind = current().allow_blind if allow_blind is None else allow_blind
    watcher = Watcher(Scope(packages, folders), dataclasses.replace(base, tests=()), tests, verify, blind)
    with _lock:
        _stop_current()
        watcher.hook.start()
        _current = watcher
    return watcher


def unwatch(timeout: float = 5.0) -> None:
    """Stop watching: remove the hook and let the running repair end (up to ``timeout`` seconds)."""
    with _lock:
        _stop_current(timeout)


def watching() -> Watcher | None:
    """The active :class:`Watcher`, if ``watch()`` is on."""
    return _current


def _stop_current(timeout: float = 5.0) -> None:
    global _current
    if _current is None:
        return
    _current.hook.stop()
    _current.worker.stop(timeout)
    _current = None


def _after_fork_in_child() -> None:
    """A child forked by the worker (a sandbox) must start no repair; any other child (a gunicorn
    worker forked after ``watch()``) goes on watching, with a worker thread and a queue of its own."""
    global _lock
    current = _current
    if current is not None and threading.get_ident() == current.worker.ident:
        current.forked = True
    elif not regrow_child():
        _lock = threading.Lock()
        if current is not None:
            current.worker.forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def require() -> Watcher:
    """The active watcher, or the error that says to start one."""
    if _current is None:
        raise RegrowError("regrow.watch() is not on")
    return _current

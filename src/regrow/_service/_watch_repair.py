"""The background side of ``regrow.watch``: one worker thread repairs the failures the hook captured.

A failing call never waits here: the hook hands over a :class:`Job` and returns, and the caller gets
its original exception. The worker builds the repair the way ``@heal`` does (the same checks, the
same no-oracle policy in :func:`regrow._proof._policy.admit`, the same sandbox), runs the session without
installing, and installs the proven fix only when an oracle proved it or the user allowed blind fixes.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import os
import queue
import threading
import time
import types
from collections.abc import Callable
from typing import Any, Literal

from .._checks._oracles import Check, Replay, TestCallable, annotation_oracle
from .._evidence._failure import capture_exception
from .._heal._assembly import RepairRequest
from .._heal._fleet import run_claimed
from .._heal._ledger import refused_result
from .._heal._options import Options
from .._result import RepairResult
from .._target._target import Target
from .._target._unwrap import refusal
from ._watch_scope import function_of

log = logging.getLogger("regrow")

Outcome = Literal["pending", "installed", "not-installed", "failed", "refused", "skipped"]
MAX_QUEUED = 64  # failures waiting for the worker; more are dropped (counted), never block a caller


@dataclasses.dataclass(eq=False)
class Job:
    """One captured failure of a watched function, and what became of it."""

    name: str  # module.qualname of the code that failed
    code: types.CodeType
    namespace: dict[str, Any] = dataclasses.field(repr=False)  # the failed frame's globals: where its function is found
    exc: BaseException
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    refused: str = ""  # set: the call cannot be replayed, and this is why
    key: tuple[Any, ...] = ()  # the bug, not the input: (code, exception type, line); quiet while cooling down
    outcome: Outcome = "pending"
    detail: str = ""
    result: RepairResult | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)

    def wait(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds for the repair to end; whether it ended."""
        return self.done.wait(timeout)

    def finish(self, outcome: Outcome, detail: str, result: RepairResult | None = None) -> None:
        self.outcome, self.detail, self.result = outcome, detail, result
        self.exc = _Released()  # the traceback (and every frame in it) is no longer needed
        self.args, self.kwargs = (), {}
        self.done.set()


class _Released(Exception):
    """Stands for a job's exception once the job is done."""


class Worker:
    """The one thread that repairs watched failures, one at a time, started on the first failure.

    ``options_for(func)`` gives the options a function is repaired with (its tests, verify, budget);
    ``allow_blind``: install fixes no oracle proved. ``history`` keeps the last finished jobs.
    """

    def __init__(self, options_for: Callable[[types.FunctionType], Options], allow_blind: bool,
                 function_filter: Callable[[types.FunctionType], bool]) -> None:
        self.options_for = options_for
        self.allow_blind = allow_blind
        self.function_filter = function_filter
        self.history: collections.deque[Job] = collections.deque(maxlen=256)
        self.dropped = 0
        self._queue: queue.Queue[Job | None] = queue.Queue(MAX_QUEUED)
        self._pending: dict[types.CodeType, Job] = {}  # one repair per function at a time
        self._cooldown: dict[str, float] = {}  # fingerprint -> time before which it is not repaired again
        self._quiet: dict[tuple[Any, ...], float] = {}  # Job.key -> the same, checked before any capture
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self.ident = 0  # the worker thread's: failures on it (its own checks) start nothing

    def pending(self, code: types.CodeType) -> Job | None:
        return self._pending.get(code)

    def quiet(self, key: tuple[Any, ...]) -> bool:
        """Whether failures of this bug (whatever the input) start nothing: one could not be repaired lately."""
        return self._quiet.get(key, 0.0) > time.monotonic()

    def submit(self, job: Job) -> Job:
        """Queue ``job`` (or give the job already pending for its code); never blocks."""
        with self._lock:
            running = self._pending.get(job.code)
            if running is not None:
                return running
            self._start()
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                self.dropped += 1
                job.finish("skipped", "too many failures waiting for repair")
                return job
            self._pending[job.code] = job
            return job

    def forked(self) -> None:
        """In a process forked from this one's (a gunicorn worker, a ``multiprocessing`` pool; not one regrow forks):
        the parent's jobs are the parent's, and its queue and lock are not this process's to share. A queue whose
        parent's worker thread was waiting for a job at the fork would hand the first job here to that thread,
        which is not here: the worker started here never woke, and nothing was ever repaired."""
        self._queue = queue.Queue(MAX_QUEUED)
        self._lock = threading.Lock()
        self._pending.clear()

    def _start(self) -> None:
        """Start the thread in this process (after a fork, e.g. a gunicorn worker, the parent's is gone)."""
        if self._thread is not None and self._pid == os.getpid() and self._thread.is_alive():
            return
        if self._pid != os.getpid():
            self._pending.clear()
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._loop, name="regrow-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Let the running repair end and stop the thread (jobs still queued are skipped)."""
        thread = self._thread
        if thread is None or self._pid != os.getpid():
            return
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)
        thread.join(timeout)

    def _loop(self) -> None:
        self.ident = threading.get_ident()
        while True:
            job = self._queue.get()
            if job is None:
                break
            try:
                self._run(job)
            except Exception as internal:  # a fault in regrow must not end the worker
                log.exception("regrow watch: repairing %s failed inside regrow", job.name)
                job.finish("failed", f"internal error: {internal!r}")
            finally:  # in the history before it is no longer pending: Watcher.drain waits for that
                self.history.append(job)
                with self._lock:
                    self._pending.pop(job.code, None)
        while not self._queue.empty():
            left = self._queue.get_nowait()
            if left is not None:
                left.finish("skipped", "watch stopped")

    def _run(self, job: Job) -> None:
        func = _function(job)
        if isinstance(func, str):
            job.finish("skipped", func)
            log.info("regrow watch: %s: %s", job.name, func)
            return
        if not self.function_filter(func):
            job.finish("skipped", f"{func.__module__} is not one of the watched packages")
            return
        options = self.options_for(func)
        if job.refused:
            self._quiet[job.key] = time.monotonic() + options.cooldown
            failure = capture_exception(job.exc, func, job.args, job.kwargs)
            job.finish("refused", job.refused, refused_result(job.name, failure, job.refused, options))
            return
        result, fingerprint = self._repair(job, func, options)
        if result is None:
            job.finish("skipped", "cooling down: this failure could not be repaired a short while ago")
            return
        if not result.ok:
            self._cooldown[fingerprint] = time.monotonic() + options.cooldown
            self._quiet[job.key] = time.monotonic() + options.cooldown
            job.finish("refused" if result.reason.startswith("refused") else "failed", result.reason, result)
            return
        if result.installed is not None:
            log.info("regrow watch: installed a fix for %s\n%s", job.name, result.diff)
            job.finish("installed", f"fix installed ({result.installed})", result)
            return
        # Not installed, so the bug stays: quiet for the cooldown like a failed repair (one bug, one repair), not
        # a session (and the same warning and diff) for each failure of it.
        self._cooldown[fingerprint] = time.monotonic() + options.cooldown
        self._quiet[job.key] = time.monotonic() + options.cooldown
        detail = ("proven without an oracle (no tests= or verify= for it), so not installed: it changes what "
                  "the function returns where it failed; watch(allow_blind=True) installs such fixes")
        log.warning("regrow watch: %s: %s\n%s", job.name, detail, result.diff)
        job.finish("not-installed", detail, result)

    def _repair(self, job: Job, func: types.FunctionType, options: Options) -> tuple[RepairResult | None, str]:
        """One session for the job's failure (``None`` while the failure cools down) and its fingerprint."""
        verify, tests = options.verify, options.tests
        failure = capture_exception(job.exc, func, job.args, job.kwargs)
        if self._cooldown.get(failure.fingerprint, 0.0) > time.monotonic():
            return None, failure.fingerprint
        replay = Replay(job.args, job.kwargs, verify, annotation_oracle(func, verify, tests))
        checks: list[Check] = [replay, *(TestCallable(t) for t in tests)]
        # A fix proven without an oracle is installed only with the user's consent (allow_blind).
        request = RepairRequest(Target.of(func), failure, tuple(checks), options, raised=job.exc, snapshot=False,
                                install=options.oracle or self.allow_blind)
        return run_claimed(request), failure.fingerprint


def _function(job: Job) -> types.FunctionType | str:
    """The live function of the job's code, or why there is none this worker may repair."""
    func = function_of(job.code, job.namespace)
    if func is None:
        return "no live function runs this code (a nested function or one already replaced)"
    reason = refusal(func)
    return reason or func

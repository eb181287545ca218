"""The in-process sandbox: the fastest mode, for trusted code, with a wall-clock limit.

The call runs on a worker thread; the caller waits at most ``limits.timeout`` seconds. On overrun
the worker is sent an asynchronous ``SandboxTimeout`` at every bytecode boundary until it gives up,
and if it still has not returned (a long C call such as ``time.sleep`` cannot be interrupted, and
code may catch ``BaseException`` in a loop) the thread is abandoned: the caller gets control back
either way. Nothing else is isolated: the call shares memory, files and the network with the host.
"""

from __future__ import annotations

import ctypes
import queue
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from ._base import ErrorInfo, Limits, Outcome, globals_of, masked

_GRACE = 0.2  # seconds the worker has to unwind after it was told to stop


class SandboxTimeout(BaseException):
    """Raised inside a call that overran its time limit (a BaseException so broad handlers miss it)."""


class _Worker:
    """One daemon thread that runs calls handed to it, one at a time."""

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[Outcome]] | None] = (
            queue.SimpleQueue()
        )
        self.thread = threading.Thread(target=self._loop, name="regrow-sandbox", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            while (job := self.inbox.get()) is not None:
                fn, reply = job
                reply.put(_run(fn))
        except SandboxTimeout:  # an interrupt that landed after the call had already returned
            pass


def _run(fn: Callable[[], Any]) -> Outcome:
    start = time.perf_counter()
    try:
        value = fn()
    except SandboxTimeout:
        return Outcome("timeout", duration=time.perf_counter() - start)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt and the like are verdicts here, not exits
        return Outcome(
            "error",
            error=ErrorInfo.from_exception(exc, traceback.format_exc(limit=-8)),
            duration=time.perf_counter() - start,
        )
    return Outcome("ok", value=value, duration=time.perf_counter() - start)


def _interrupt(thread: threading.Thread) -> None:
    ident = thread.ident
    if ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(SandboxTimeout))


class InProcessSandbox:
    """Runs calls in this process, on a reusable worker thread, under a wall-clock limit."""

    name = "inprocess"

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome:
        timeout = (limits or self.limits).timeout
        worker = self._take()
        reply: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        worker.inbox.put(((lambda: fn(*args)) if args else fn, reply))
        try:
            outcome = reply.get(timeout=timeout)
        except queue.Empty:
            return self._stop(worker, reply, timeout)
        self._give_back(worker)
        return masked(outcome, globals_of(fn))

    def _stop(self, worker: _Worker, reply: queue.SimpleQueue[Outcome], timeout: float) -> Outcome:
        deadline = time.monotonic() + _GRACE
        while time.monotonic() < deadline:
            _interrupt(worker.thread)
            try:
                reply.get(timeout=0.01)
            except queue.Empty:
                continue
            # Not given back: an interrupt sent just before the reply may still be pending on this
            # thread and would fire in the next call it runs. It ends at its next inbox read.
            worker.inbox.put(None)
            return Outcome("timeout", detail=f"exceeded {timeout:g}s", duration=timeout)
        worker.inbox.put(None)  # ends the thread if it ever returns; until then it is abandoned
        return Outcome("timeout", detail=f"exceeded {timeout:g}s; the call could not be interrupted", duration=timeout)

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return _Worker()

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def close(self) -> None:
        with self._lock:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.inbox.put(None)

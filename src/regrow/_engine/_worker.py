"""A warm worker: a child forked from this process that runs named jobs, killed and replaced on overrun.

Forking after the tests are collected and the target imported gives a child that is ready at
once, shares nothing it could spoil with the host, and can be killed outright: a mutant that
loops forever while building an ever larger integer holds the interpreter lock inside a single
C call, where no in-process time limit reaches it. Jobs are the functions handed to the
constructor (closures over the live state are fine: the child has a copy of it); their arguments
and results cross the pipe pickled. Where ``fork`` does not exist the jobs run in this process
under the in-process sandbox instead.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import struct
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._sandbox import InProcessSandbox, Limits

_HEADER = struct.Struct("!I")
_EXTRA_MEMORY = 2 << 30  # address space a child may add to what it started with


_in_child = False  # set in a forked worker, where jobs run on the main thread and SIGALRM is ours


class Overrun(BaseException):
    """Raised inside a job step that overran the limit set with :func:`time_limit`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the code inside with :class:`Overrun` after ``seconds`` (main thread of a worker only)."""
    if not _in_child:
        yield
        return

    def overrun(signum: int, frame: object) -> None:
        raise Overrun

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)



class Worker:
    """Runs ``jobs[name](*args)`` in a forked child with a wall-clock limit per call."""

    def __init__(self, jobs: Mapping[str, Callable[..., Any]], fork: bool | None = None) -> None:
        self.jobs = dict(jobs)
        self.forking = hasattr(os, "fork") if fork is None else fork
        self.forks = 0  # children started, for reports
        self._child: tuple[int, int, int] | None = None  # pid, request fd, reply fd
        self._sandbox = InProcessSandbox()
        self._lock = threading.Lock()

    def call(self, job: str, *args: Any, timeout: float) -> tuple[str, Any]:
        """``("ok", result)``, ``("error", message)``, ``("timeout", None)`` or ``("crashed", message)``."""
        with self._lock:
            if not self.forking:
                outcome = self._sandbox.call(self.jobs[job], *args, limits=Limits(timeout=timeout))
                if outcome.ok:
                    return "ok", outcome.value
                return ("timeout", None) if outcome.status == "timeout" else ("error", outcome.reason())
            return self._call_child(job, args, timeout)

    def _call_child(self, job: str, args: tuple[Any, ...], timeout: float) -> tuple[str, Any]:
        if self._child is None:
            self._child = self._spawn()
        _, request, reply = self._child
        try:
            _write(request, pickle.dumps((job, args)))
            body = _read(reply, time.monotonic() + timeout)
        except (OSError, EOFError, pickle.PicklingError) as exc:
            self._kill()
            return "crashed", f"the worker died: {exc}"
        if body is None:
            self._kill()
            return "timeout", None
        status, value = pickle.loads(body)
        return status, value

    def _spawn(self) -> tuple[int, int, int]:
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        # Frozen objects are left alone by the child's collector, which would otherwise touch (and so
        # copy) every page of the parent's heap.
        gc.freeze()
        pid = -1
        try:
            with warnings.catch_warnings():  # 3.12 warns about fork in a threaded process; the child
                warnings.simplefilter("ignore", DeprecationWarning)  # only runs our jobs, then _exit
                pid = os.fork()
        finally:
            if pid != 0:
                gc.unfreeze()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            os.close(request_w)
            os.close(reply_r)
            _serve(self.jobs, request_r, reply_w)
        os.close(request_r)
        os.close(reply_w)
        self.forks += 1
        return pid, request_w, reply_r

    def _kill(self) -> None:
        if self._child is None:
            return
        pid, request, reply = self._child
        self._child = None
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
        for fd in (request, reply):
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        with self._lock:
            self._kill()
            self._sandbox.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(jobs: Mapping[str, Callable[..., Any]], request: int, reply: int) -> None:  # pragma: no cover
    """The child's loop: run each job asked for and answer, until the host closes the pipe."""
    global _in_child
    _in_child = True
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        _limit_memory()
        while True:
            try:
                body = _read(request, None)
            except EOFError:
                break
            if body is None:
                break
            job, args = pickle.loads(body)
            try:
                answer = ("ok", jobs[job](*args))
            except BaseException as exc:  # the job's failure is an answer, not the end of the worker
                answer = ("error", f"{type(exc).__name__}: {exc}")
            try:
                data = pickle.dumps(answer)
            except Exception as exc:
                data = pickle.dumps(("error", f"unpicklable result: {exc}"))
            _write(reply, data)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as file:
            pages = int(file.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + _EXTRA_MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the host's time limit still ends a runaway child


def _write(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int, deadline: float | None) -> bytes | None:
    """One frame's body; ``None`` when the deadline passes first; ``EOFError`` when the pipe closes."""
    head = _read_exactly(fd, _HEADER.size, deadline)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exactly(fd, size, deadline)


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)

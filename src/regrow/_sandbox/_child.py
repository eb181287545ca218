"""The child's side of the fork sandbox: take its own fds and session, guard itself, run the job, report.

The child always leaves with ``os._exit``: it never runs the host's ``atexit`` handlers or
``finally`` blocks, nor flushes the host's stdio buffers a second time.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import contextlib
import dataclasses
import fcntl
import gc
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from . import _guard
from ._afterfork import armed_setup_ran, fresh_process
from ._base import ErrorInfo
from ._channel import ChannelError, check_plain, encode, error_data, write_frame

MESSAGE_LIMIT = 2000
_TRACEBACK_LIMIT = 20000
_THREAD_GRACE = 0.05  # seconds a thread the call started may take to finish after the call returned
_sigmask = _signal.pthread_sigmask  # not signal's wrapper: it makes an enum of each signal of the old mask
_ALL_SIGNALS = signal.valid_signals()  # made in the host: a child that builds it pays ~0.1 ms of page faults


def run_job(job: Callable[[], Any], limit: int, threads: int | None = None, **extra: Any) -> bytes:
    """Run ``job`` here and now; return its result as one encoded frame (never raises for what it does).

    ``extra`` (plain data) is added to the frame, e.g. the call id a pool worker echoes back;
    ``threads`` is how many threads this process has before the call, if known. When
    this returns, nothing of the call runs any more: no thread it started (else the result is an
    error), no signal handler (signals stay blocked) and no finalizer (the collector stays off) —
    so nothing it does can land after its result. :func:`resume` undoes that for a process that
    serves more calls.
    """
    before, tasks = set(threading.enumerate()), threads or os_threads()
    started = time.perf_counter()
    try:
        data: dict[str, Any] = {"status": "ok", "value": job()}
    except BaseException as exc:  # SystemExit, KeyboardInterrupt and the like are verdicts here, not exits
        data = {"status": "error", "error": _error(exc)}
    duration = time.perf_counter() - started
    flush_stdio()
    leftovers = _guard.leftover_threads(before)
    quiesce()
    stray = 0 if leftovers else _stray_threads(tasks)
    if leftovers or stray:  # they would die silently at os._exit; a fix that leaks threads is not a fix
        names = ", ".join(leftovers) or f"{stray} started without threading"
        message = f"the call left {len(leftovers) or stray} thread(s) running after it returned: {names}"
        data = {"status": "error", "error": error_data(ErrorInfo("SandboxViolation", message[:MESSAGE_LIMIT]))}
    if data["status"] == "ok":
        try:
            check_plain(data["value"])
        except ChannelError as exc:
            data = _failed("TypeError", f"return value is {exc}")
    data.update(extra, kind="result", duration=duration, leftovers=bool(leftovers or stray))
    try:
        return encode(data, limit)
    except ChannelError as exc:
        failed = _failed("ValueError", f"return value is too large: {exc}")
        return encode(data | failed | {"value": None}, limit)


def quiesce() -> None:
    """No more code of the call from here on: no signal handler, no finalizer run by the collector."""
    gc.disable()
    _sigmask(signal.SIG_BLOCK, _ALL_SIGNALS)


def resume() -> None:
    gc.enable()
    _sigmask(signal.SIG_SETMASK, ())


def os_threads() -> int:
    """Threads of this process as the kernel counts them (``_thread`` and native ones too; 1 where unknown)."""
    try:
        counted = os.stat("/proc/self/task").st_nlink - 2  # Linux: 2 + one link per thread; cheaper than listing
        return counted if counted > 0 else len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _stray_threads(before: int) -> int:
    """Threads beyond ``before`` still running after a short grace (a dying thread takes a moment to go)."""
    deadline = time.monotonic() + _THREAD_GRACE
    while (stray := os_threads() - before) > 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    return max(stray, 0)


def _error(exc: BaseException) -> dict[str, str]:
    try:
        formatted = traceback.format_exc(limit=-8)
    except BaseException:  # a hostile __str__ may raise while formatting
        formatted = ""
    info = ErrorInfo.from_exception(exc, formatted[-_TRACEBACK_LIMIT:])
    return error_data(dataclasses.replace(info, message=info.message[:MESSAGE_LIMIT]))


def _failed(kind: str, message: str) -> dict[str, Any]:
    return {"status": "error", "error": error_data(ErrorInfo(kind, message[:MESSAGE_LIMIT]))}


def flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105  # closed or replaced by the call: its output is its own business
            stream.flush()
        except BaseException:  # not contextlib.suppress: an object and three calls more, in a child
            pass


def setup(plan: _guard.Plan, fds: tuple[int, int | None], locks: tuple[Any, ...], *,
          request: int | None = None, watched: bool = True) -> Callable[[], None]:
    """What the child does first, in the at-fork handler (:mod:`._afterfork`): its own fds and session,
    nothing another thread held, then every guard. It never returns with an exception: a guard that
    fails to apply is reported and the child exits, so the job never runs unguarded.

    The same for each kind of child: ``fds`` are its result pipe and its output pipe (``None``: output
    goes nowhere); a child that serves many jobs also keeps the pipe it reads them from (``request``,
    see :mod:`regrow._sandbox._warm`). ``watched=False`` leaves out the seccomp filter and the audit
    hook, for a child that runs only the user's own code under ``sys.settrace``.
    """

    def guard_child() -> None:
        result_fd = fds[0]
        try:
            result_fd, keep, request_fd = own_fds(fds, plan.netns_fd, request)
            fresh_process(locks)
            _guard.private_scratch(plan)  # before anything is made in scratch
            _pytest_temp_inside(plan.scratch)
            _guard.confine(plan, scratch_ready=True, netns_fd=keep)  # the namespace fd as renumbered here
            if keep is not None:
                os.close(keep)
            if watched:
                _guard.watch(plan, result_fd)  # last: nothing after it may use ctypes
        except BaseException as exc:  # a guard that fails to apply: never run the job unguarded
            _report_setup_failure(result_fd, exc)
            os._exit(70)
        _result_fd[0], _request_fd[0] = result_fd, request_fd if request_fd is not None else -1

    return guard_child


_result_fd = [-1]  # in a guarded child: where its result goes
_request_fd = [-1]  # in a child that serves many jobs: where they come from


def pipes() -> tuple[int, int]:
    """In a guarded child: the fds it reads jobs from and writes results to (-1 where it has none)."""
    return _request_fd[0], _result_fd[0]


def child(job: Callable[[], Any], plan: _guard.Plan, guard: Callable[[], None]) -> NoReturn:
    """The forked child: guarded already (or now, where no at-fork handler ran), run the job, send the
    result, leave without unwinding the host's stack."""
    try:
        if not armed_setup_ran():
            guard()
        write_frame(_result_fd[0], run_job(job, plan.limits.result_bytes, threads=1))  # a fork has one thread
    finally:
        os._exit(0)


def _pytest_temp_inside(scratch: str) -> None:
    """Where the job runs collected pytest tests, their ``tmp_path`` must live in the scratch folder
    (the guard refuses writes and symlinks anywhere else). Nothing to do when no suite is open."""
    runner = sys.modules.get("regrow._checks._pytest_runner")
    if runner is not None and getattr(runner, "_suites", True):  # a mkdir a call costs, only with a suite open
        root = os.path.join(scratch, "pytest")
        os.makedirs(root, exist_ok=True)
        runner.use_temp_root(root)
        follow_cwd(scratch)


def follow_cwd(scratch: str) -> None:
    """The suites collected in the host's working directory, found from the scratch folder too: the child's
    working directory becomes its scratch folder, and a suite is looked up by the directory it was
    collected in (its node ids are relative to it). Call before the working directory changes."""
    runner = sys.modules.get("regrow._checks._pytest_runner")
    suites = getattr(runner, "_suites", None)
    if type(suites) is not dict or not suites:
        return
    cwd = os.getcwd()
    for key, suite in list(suites.items()):
        if type(key) is tuple and len(key) == 4 and key[2] == cwd:
            suites[(key[0], key[1], scratch, key[3])] = suite


def _report_setup_failure(fd: int, exc: BaseException) -> None:
    with contextlib.suppress(BaseException):  # nothing more to do if even this fails: the exit code tells
        write_frame(fd, encode({"kind": "setup", "reason": f"{type(exc).__name__}: {exc}"[:MESSAGE_LIMIT]}, 1 << 16))


def own_fds(fds: tuple[int, int | None], netns: int | None,
            request: int | None = None) -> tuple[int, int | None, int | None]:
    """A session of its own; stdin from /dev/null, stdout/stderr into the output pipe (or /dev/null),
    every other inherited fd closed but the result pipe, the network namespace and the request pipe:
    their new numbers, in that order.

    The session: no controlling terminal (no ``TIOCSTI`` into the user's shell, no signals from its
    keyboard) and one process group, which the parent kills as a whole. Closing matters: an
    inherited fd on the host's database, log file or TLS socket would let the child write to them
    without any path or connect for a guard to see.
    """
    os.setsid()
    result_w, output_w = fds
    dup, above = fcntl.fcntl, fcntl.F_DUPFD  # each copy numbered 10 or more: out of the way of 0-2
    result = dup(result_w, above, 10)
    output = dup(output_w, above, 10) if output_w is not None else None
    keep = dup(netns, above, 10) if netns is not None else None
    requests = dup(request, above, 10) if request is not None else None
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(output if output is not None else devnull, 1)
    os.dup2(output if output is not None else devnull, 2)
    close_all_but({0, 1, 2, result} | {fd for fd in (keep, requests) if fd is not None})
    return result, keep, requests


def close_all_but(keep: set[int]) -> None:
    low = 0
    for fd in sorted(keep):
        if low < fd:  # closerange(n, n) becomes close_range(n, -1): every fd from n up
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)

"""The fork sandbox: each call runs in a fresh forked child that keeps the live state of its parent.

By default the child is forked from the caller at the moment of the call, so a job that closes
over state created just now sees exactly that state. With ``server=True`` a small fork server is
forked from the host at first use and every call is forked from that pristine copy instead; jobs
then cross to it as ``"module:qualname"`` references with plain-data arguments.

In the child, the guard (``_guard.harden``) limits resources, scrubs secrets and installs the audit
hook; the result comes back as frames of plain data on a dedicated pipe, and what the child prints
comes back, capped, as ``Outcome.output``. The parent enforces the wall-clock limit with SIGKILL to
the child's process group. The child always leaves with ``os._exit``: it never runs the host's
``atexit`` handlers or ``finally`` blocks, nor flushes the host's stdio buffers a second time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import itertools
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from . import _guard
from ._base import ErrorInfo, Limits, Outcome, Status
from ._channel import (
    ChannelError,
    Collector,
    FrameReader,
    check_plain,
    decode,
    encode,
    error_data,
    function_ref,
    outcome_from_data,
    outcome_to_data,
    resolve_ref,
    write_frame,
)

OUTPUT_LIMIT = 64 << 10  # bytes of a call's printed output kept in Outcome.output
_MESSAGE_LIMIT = 2000
_TRACEBACK_LIMIT = 20000
_SERVER_GRACE = 5.0  # seconds the host allows a fork server beyond the call's own limit
_SIGNAL_HINTS: dict[int, str] = {
    signal.SIGKILL: "memory limit, CPU limit, or killed from outside",
    signal.SIGSEGV: "stack overflow or a crash in C code",
    signal.SIGBUS: "a crash in C code",
    signal.SIGABRT: "aborted",
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
}


# -- inside the child -------------------------------------------------------------------------


def run_job(job: Callable[[], Any], limit: int, **extra: Any) -> bytes:
    """Run ``job`` here and now; return its result as one encoded frame (never raises for what it does).

    ``extra`` (plain data) is added to the frame, e.g. the call id a pool worker echoes back.
    """
    before = set(threading.enumerate())
    started = time.perf_counter()
    try:
        data: dict[str, Any] = {"status": "ok", "value": job()}
    except BaseException as exc:  # SystemExit, KeyboardInterrupt and the like are verdicts here, not exits
        data = {"status": "error", "error": _error(exc)}
    duration = time.perf_counter() - started
    flush_stdio()
    leftovers = _guard.leftover_threads(before)
    if leftovers:  # they would die silently at os._exit; a fix that leaks threads is not a fix
        message = f"the call left {len(leftovers)} thread(s) running after it returned: {', '.join(leftovers)}"
        data = {"status": "error", "error": error_data(ErrorInfo("SandboxViolation", message[:_MESSAGE_LIMIT]))}
    if data["status"] == "ok":
        try:
            check_plain(data["value"])
        except ChannelError as exc:
            data = _failed("TypeError", f"return value is {exc}")
    data.update(extra, kind="result", duration=duration, leftovers=bool(leftovers))
    try:
        return encode(data, limit)
    except ChannelError as exc:
        failed = _failed("ValueError", f"return value is too large: {exc}")
        return encode(data | failed | {"value": None}, limit)


def _error(exc: BaseException) -> dict[str, str]:
    try:
        formatted = traceback.format_exc(limit=-8)
    except BaseException:  # a hostile __str__ may raise while formatting
        formatted = ""
    info = ErrorInfo.from_exception(exc, formatted[-_TRACEBACK_LIMIT:])
    return error_data(dataclasses.replace(info, message=info.message[:_MESSAGE_LIMIT]))


def _failed(kind: str, message: str) -> dict[str, Any]:
    return {"status": "error", "error": error_data(ErrorInfo(kind, message[:_MESSAGE_LIMIT]))}


def flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # closed or replaced by the call: its output is its own business
            stream.flush()


def _child(job: Callable[[], Any], plan: _guard.Plan, fds: tuple[int, int]) -> NoReturn:
    """The forked child: guard itself, run the job, send the result, leave without unwinding the host's stack."""
    result_fd = fds[0]
    try:
        result_fd, keep = _own_fds(fds, plan.netns_fd)
        _pytest_temp_inside(plan.scratch)
        _guard.harden(dataclasses.replace(plan, netns_fd=keep), result_fd)
        if keep is not None:
            os.close(keep)
        _guard.fresh_stdio()
    except BaseException as exc:  # a guard that fails to apply: never run the job unguarded
        _report_setup_failure(result_fd, exc)
        os._exit(70)
    try:
        write_frame(result_fd, run_job(job, plan.limits.result_bytes))
    finally:
        os._exit(0)


def _pytest_temp_inside(scratch: str) -> None:
    """Where the job runs collected pytest tests, their ``tmp_path`` must live in the scratch folder
    (the guard refuses writes and symlinks anywhere else). Nothing to do when no suite is open."""
    runner = sys.modules.get("regrow._pytest_runner")
    if runner is not None:
        root = os.path.join(scratch, "pytest")
        os.makedirs(root, exist_ok=True)
        runner.use_temp_root(root)


def _report_setup_failure(fd: int, exc: BaseException) -> None:
    with contextlib.suppress(BaseException):  # nothing more to do if even this fails: the exit code tells
        write_frame(fd, encode({"kind": "setup", "reason": f"{type(exc).__name__}: {exc}"[:_MESSAGE_LIMIT]}, 1 << 16))


def _own_fds(fds: tuple[int, int], netns: int | None) -> tuple[int, int | None]:
    """stdin from /dev/null, stdout/stderr into the output pipe, every other inherited fd closed.

    Closing matters: an inherited fd on the host's database, log file or TLS socket would let the
    child write to them without any path or connect for a guard to see.
    """
    os.setpgid(0, 0)  # its own process group, so the parent can kill everything it started at once
    result_w, output_w = fds
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (result_w, output_w)]  # out of the way of 0-2
    keep = fcntl.fcntl(netns, fcntl.F_DUPFD, 10) if netns is not None else None
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(high[1], 1)
    os.dup2(high[1], 2)
    _close_all_but({0, 1, 2, high[0]} | ({keep} if keep is not None else set()))
    return high[0], keep


def _close_all_but(keep: set[int]) -> None:
    low = 0
    for fd in sorted(keep):
        if low < fd:  # closerange(n, n) becomes close_range(n, -1): every fd from n up
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


# -- in the parent ----------------------------------------------------------------------------


class Forker:
    """Forks one guarded child per call from the current process and supervises it."""

    def __init__(self) -> None:
        self.netns = _guard.prepare()
        self._root = os.path.realpath(tempfile.mkdtemp(prefix="regrow-sandbox-"))
        self._count = itertools.count()
        self._exited: list[int] = []  # children that sent their result and were told to go, not yet reaped
        self._lock = threading.Lock()

    def call(self, job: Callable[[], Any], limits: Limits) -> Outcome:
        """Run ``job`` in a child forked from this process now; wait at most ``limits.timeout``."""
        self._reap()
        scratch = f"{self._root}/{next(self._count)}"
        os.mkdir(scratch, 0o700)
        plan = _guard.plan(scratch, limits, self.netns)
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        flush_stdio()  # or the child would inherit, and write out, whatever the host has buffered
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(job, plan, (result_w, output_w))
        os.close(result_w)
        os.close(output_w)
        with contextlib.suppress(OSError):  # also here: the parent may need to kill the group before the child ran
            os.setpgid(pid, pid)
        try:
            return self._supervise(pid, (result_r, output_r), limits, started)
        finally:
            os.close(result_r)
            os.close(output_r)
            _remove(scratch)

    def _supervise(self, pid: int, fds: tuple[int, int], limits: Limits, started: float) -> Outcome:
        collector = Collector(fds[0], fds[1], limits.result_bytes, OUTPUT_LIMIT)
        broken = ""
        try:
            # A result frame is the child's last act: no need to wait for its exit (a ms of teardown).
            finished = collector.run(started + limits.timeout, lambda c: _has_result(c) or not c.result_open)
        except ChannelError as exc:
            finished, broken = False, str(exc)
        status: int | None = 0
        try:
            if finished and _has_result(collector):
                _kill(pid)  # it is leaving anyway; this also ends one that forged its result and went on
                with self._lock:
                    self._exited.append(pid)
            else:  # no result: how it ended is the verdict, so wait for it (or kill it at the deadline)
                status = self._end(pid, started + limits.timeout if finished else None)
                finished = finished and status is not None
            collector.drain_output()
        finally:
            collector.close()
        timed_out = not finished and not broken
        return assemble(collector.frames, status or 0, limits, timed_out, broken, collector.output(), started)

    @staticmethod
    def _end(pid: int, deadline: float | None) -> int | None:
        """Wait status of a child that closed its result pipe; kill it if it lingers past the deadline."""
        status = _wait(pid, deadline) if deadline is not None else None
        if status is None:
            _kill(pid)
            os.waitpid(pid, 0)
        return status

    def _reap(self) -> None:
        with self._lock:
            pending, self._exited = self._exited, []
        for pid in pending:
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                with self._lock:
                    self._exited.append(pid)

    def close(self) -> None:
        with self._lock:
            pending, self._exited = self._exited, []
        for pid in pending:
            os.waitpid(pid, 0)  # they were sent SIGKILL: this cannot block for long
        shutil.rmtree(self._root, ignore_errors=True)


def _has_result(collector: Collector) -> bool:
    return any(_is(frame, "result") for frame in collector.frames)


def _remove(scratch: str) -> None:
    try:
        os.rmdir(scratch)  # the common case: the call wrote nothing
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)


def assemble(
    frames: list[Any], status: int, limits: Limits, timed_out: bool, broken: str, output: str, started: float
) -> Outcome:
    """The outcome of one child from what it sent and how it ended."""
    violations = tuple(f["reason"] for f in frames if _is(f, "violation") and type(f.get("reason")) is str)
    results = [f for f in frames if _is(f, "result")]
    setup = [f.get("reason") for f in frames if _is(f, "setup")]
    duration = time.monotonic() - started
    if setup:
        outcome = Outcome("crashed", detail=f"the sandbox could not set up its guards in the child: {setup[0]}")
    elif timed_out:
        outcome = Outcome("timeout", detail=f"exceeded {limits.timeout:g}s; killed", duration=duration)
    elif broken:
        outcome = Outcome("crashed", detail=f"malformed result channel: {broken}", duration=duration)
    elif len(results) == 1:
        outcome = _from_result(results[0], duration)
    elif len(results) > 1:
        outcome = Outcome("crashed", detail=f"the child sent {len(results)} results (a forged frame?)")
    else:
        kind, detail = describe_exit(status)
        outcome = Outcome(kind, detail=detail, duration=duration)
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        outcome = dataclasses.replace(outcome, status="refused", value=None, detail=f"refused {violations[0]}{more}")
    return dataclasses.replace(outcome, output=output, violations=violations)


def _is(frame: Any, kind: str) -> bool:
    return type(frame) is dict and frame.get("kind") == kind


def _from_result(frame: dict[str, Any], duration: float) -> Outcome:
    try:
        data = {k: frame[k] for k in ("status", "value", "error") if k in frame} | {"duration": duration}
        outcome = outcome_from_data(data)
    except ChannelError as exc:
        return Outcome("crashed", detail=f"malformed result: {exc}", duration=duration)
    if outcome.status not in ("ok", "error"):
        return Outcome("crashed", detail=f"malformed result: status {outcome.status!r}", duration=duration)
    return outcome


def describe_exit(status: int) -> tuple[Status, str]:
    """Why a child that sent no result ended, from its wait status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        hint = _SIGNAL_HINTS.get(number)
        detail = f"killed by {name}" + (f" ({hint})" if hint else "")
        return ("timeout" if number == signal.SIGXCPU else "crashed"), detail
    code = os.waitstatus_to_exitcode(status)
    return "crashed", f"exited with status {code} before returning a result (os._exit?)"


def _wait(pid: int, deadline: float) -> int | None:
    """The child's wait status once it exits, or None if it is still running at the deadline."""
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        time.sleep(min(remaining, delay))
        delay = min(delay * 2, 0.02)


def _kill(pid: int) -> None:
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        with contextlib.suppress(OSError):  # already gone, or not yet its own group leader
            kill(target, signal.SIGKILL)


# -- the fork server --------------------------------------------------------------------------


class _ForkServer:
    """A helper forked from the host once; it forks one child per call from its pristine copy."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._request_w = self._reply_r = -1

    def call(self, ref: str, args: list[Any], limits: Limits) -> Outcome:
        request = encode({"ref": ref, "args": args, "limits": dataclasses.asdict(limits)}, limits.result_bytes)
        with self._lock:
            if not self._pid:
                self._start()
            started = time.monotonic()
            try:
                write_frame(self._request_w, request)
                return self._reply(started + limits.timeout + _SERVER_GRACE, limits)
            except (OSError, ChannelError) as exc:
                self._stop()
                return Outcome("crashed", detail=f"fork server failed: {exc}", duration=time.monotonic() - started)

    def _reply(self, deadline: float, limits: Limits) -> Outcome:
        collector = Collector(self._reply_r, None, reply_limit(limits), 0)
        try:
            if not collector.run(deadline, lambda c: bool(c.frames) or not c.result_open) or not collector.frames:
                raise ChannelError("no reply")
            return outcome_from_data(collector.frames[0])
        finally:
            collector.close()

    def _start(self) -> None:
        request_r, self._request_w = os.pipe()
        self._reply_r, reply_w = os.pipe()
        flush_stdio()
        pid = os.fork()
        if pid == 0:
            try:
                _serve(request_r, reply_w)
            finally:
                os._exit(0)
        self._pid = pid
        os.close(request_r)
        os.close(reply_w)

    def _stop(self) -> None:
        if not self._pid:
            return
        os.close(self._request_w)  # the server exits when its request pipe ends
        os.close(self._reply_r)
        if _wait(self._pid, time.monotonic() + 1.0) is None:
            _kill(self._pid)
            os.waitpid(self._pid, 0)
        self._pid = 0

    def close(self) -> None:
        with self._lock:
            self._stop()


def _serve(request_r: int, reply_w: int) -> None:
    """The fork server's loop: one request in, one child forked, one outcome out, until EOF."""
    os.setpgid(0, 0)  # out of the terminal's process group: Ctrl-C is for the host, which then closes us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    netns = _guard.prepare()
    _close_all_but({0, 1, 2, request_r, reply_w} | ({netns} if netns is not None else set()))
    forker = Forker()
    reader = FrameReader(1 << 30)
    try:
        while data := os.read(request_r, 1 << 16):
            for body in reader.feed(data):
                write_frame(reply_w, _serve_one(forker, body))
    finally:
        forker.close()


def _serve_one(forker: Forker, body: bytes) -> bytes:
    request = decode(body)
    limits = Limits(**request["limits"])
    try:
        fn = resolve_ref(request["ref"])
    except Exception as exc:
        outcome = Outcome("error", error=ErrorInfo.from_exception(exc), detail=f"cannot resolve {request['ref']}")
    else:
        args = request["args"]
        outcome = forker.call(lambda: fn(*args), limits)
    return encode(outcome_to_data(outcome), reply_limit(limits))


def reply_limit(limits: Limits) -> int:
    """Room for an outcome carrying a value of up to ``result_bytes`` plus output and a traceback."""
    return 2 * limits.result_bytes + (1 << 20)


# -- the sandbox ------------------------------------------------------------------------------


def importable(fn: object, runner: str) -> str | Outcome:
    """``fn``'s ``"module:qualname"`` reference, or the refusal of a runner that takes only those."""
    try:
        return function_ref(fn)
    except ValueError as exc:
        return Outcome("refused", detail=f"{runner} runs importable functions only: {exc}")


def unplain(args: tuple[Any, ...]) -> Outcome | None:
    """The refusal of arguments that cannot cross to another process as plain data, or ``None``."""
    try:
        check_plain(list(args))
    except ChannelError as exc:
        return Outcome("refused", detail=f"arguments must be plain data: {exc}")
    return None


class ForkSandbox:
    """Runs each call in a forked child with resource limits, scrubbed secrets and an audit hook.

    ``server=False`` (the default) forks from the caller at call time: correct for any job,
    including a closure created just now. ``server=True`` forks from a server made at first use:
    the job must then be an importable function (or a ``call_ref`` reference) with plain-data
    arguments, and it sees the host's state as it was when the server was made.
    """

    name = "fork"

    def __init__(self, limits: Limits | None = None, *, server: bool = False) -> None:
        if not hasattr(os, "fork"):
            raise RuntimeError("the fork sandbox needs os.fork (Linux or macOS)")
        self.limits = limits or Limits()
        self.server = server
        self._forker = Forker()
        self._server = _ForkServer() if server else None

    def call(self, fn: Callable[..., Any], /, *args: Any, limits: Limits | None = None) -> Outcome:
        if self._server is None:
            return self._forker.call((lambda: fn(*args)) if args else fn, limits or self.limits)
        ref = importable(fn, "the fork server")
        return ref if isinstance(ref, Outcome) else self.call_ref(ref, *args, limits=limits)

    def call_ref(self, ref: str, /, *args: Any, limits: Limits | None = None) -> Outcome:
        """Run the function named ``"module:qualname"`` with plain-data arguments."""
        limits = limits or self.limits
        refused = unplain(args)
        if refused is not None:
            return refused
        if self._server is not None:
            return self._server.call(ref, list(args), limits)
        try:
            fn = resolve_ref(ref)
        except Exception as exc:
            return Outcome("error", error=ErrorInfo.from_exception(exc), detail=f"cannot resolve {ref}")
        return self._forker.call(lambda: fn(*args), limits)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._forker.close()

    def __enter__(self) -> ForkSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

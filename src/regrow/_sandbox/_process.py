"""The fork primitives every process-based sandbox mode shares: fork one guarded child and supervise it.

:class:`Forker` forks a child per call from the current process (the fork mode, and the fork server's
own children); :func:`wait`, :func:`kill_group` and :func:`describe_exit` end and read a child;
:func:`assemble` turns what a child sent and how it ended into an :class:`Outcome`. They live apart
from the fork *mode* (``_fork``) so that the fork server (``_server``), the pool and the engine's
warm workers depend on them and not on one mode.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from . import _guard, _hostcalls
from ._afterfork import fork_armed, regrow_locks
from ._base import Limits, Outcome, Status, clean, scratch_folder
from ._channel import (
    OUTPUT_TEXT_LIMIT,
    VIOLATION_LIMIT,
    ChannelError,
    Collector,
    check_plain,
    clean_violations,
    function_ref,
    outcome_from_data,
)
from ._child import child, setup
from ._cleanup import remove_tree

__all__ = ["OUTPUT_LIMIT", "Dying", "Forker", "assemble", "describe_exit", "importable", "kill_group", "result_outcome",
           "unplain", "wait"]

OUTPUT_LIMIT = 64 << 10  # bytes of a call's printed output kept in Outcome.output
SECCOMP_KILL = "a forbidden system call (the kernel's seccomp filter killed the process with SIGSYS)"
_SIGNAL_HINTS: dict[int, str] = {
    signal.SIGKILL: "memory limit, CPU limit, or killed from outside",
    signal.SIGSEGV: "stack overflow or a crash in C code",
    signal.SIGBUS: "a crash in C code",
    signal.SIGABRT: "aborted",
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
}


class Forker:
    """Forks one guarded child per call from the current process and supervises it."""

    def __init__(self) -> None:
        self.netns = _guard.prepare()
        self._root = scratch_folder(self, "regrow-sandbox-")
        self._count = itertools.count()
        self._exited = Dying()  # children that sent their result and were told to go, not yet reaped
        self._idle: list[str] = []  # scratch folders no call uses now, empty: a private tmpfs was mounted on them
        self._lock = threading.Lock()

    def call(self, job: Callable[[], Any], limits: Limits) -> Outcome:
        """Run ``job`` in a child forked from this process now; wait at most ``limits.timeout``.

        Never raises for anything the child does, nor for a failure in the host while it watches the
        child (``MemoryError`` included): the child is then killed and the call ends as ``crashed``.
        """
        started = time.monotonic()
        try:
            return self._call(job, limits, started)
        except Exception as exc:
            return Outcome("crashed", detail=clean(f"the sandbox failed in the host: {type(exc).__name__}: {exc}"),
                           duration=time.monotonic() - started)

    def _call(self, job: Callable[[], Any], limits: Limits, started: float) -> Outcome:
        self._reap()
        scratch = self._scratch(limits)
        try:
            plan = _guard.plan(scratch, limits, self.netns)
            result_r, result_w = _hostcalls.pipe()
            output_r, output_w = _hostcalls.pipe()
            fds = (result_w, output_w)
            guard = setup(plan, fds, regrow_locks())
            # Made before the fork: every page the host writes while the child lives costs a copy.
            collector = Collector(result_r, output_r, limits.result_bytes, OUTPUT_LIMIT)
            try:
                pid = fork_armed(guard)
                if pid == 0:
                    child(job, plan, guard)
                _hostcalls.close(result_w)
                _hostcalls.close(output_w)
                return self._supervise(pid, collector, limits, started)
            finally:
                collector.close()
                _hostcalls.close(result_r)
                _hostcalls.close(output_r)
        finally:
            self._release(scratch, limits)

    def _scratch(self, limits: Limits) -> str:
        """A folder for the call's scratch: an idle one where the child mounts a private tmpfs on it.

        Each child mounts its own tmpfs in a mount namespace of its own, so the folder itself stays empty
        and serves the next call; removing it instead would cost each call a wait (``rmdir`` of a folder
        that is a mount point in the dying child's namespace waits for an RCU grace period, ~1-5 ms)."""
        if limits.scratch_bytes is not None:
            with self._lock:
                if self._idle:
                    return self._idle.pop()
        scratch = f"{self._root}/{next(self._count)}"
        os.mkdir(scratch, 0o700)
        return scratch

    def _release(self, scratch: str, limits: Limits) -> None:
        if limits.scratch_bytes is not None and _hostcalls.is_empty(scratch):  # the tmpfs held whatever the call wrote
            with self._lock:
                self._idle.append(scratch)
        else:
            _remove(scratch)

    def _supervise(self, pid: int, collector: Collector, limits: Limits, started: float) -> Outcome:
        broken, reaped = "", False
        status: int | None = 0
        try:
            try:
                # A result frame is the child's last act: no need to wait for its exit (a ms of teardown).
                finished = collector.run(started + limits.timeout, lambda c: _has_result(c) or not c.result_open)
            except (ChannelError, MemoryError) as exc:  # a child that floods or forges the channel
                finished, broken = False, str(exc) if isinstance(exc, ChannelError) else "MemoryError while decoding"
            if finished and _has_result(collector):
                with self._lock:  # it is leaving anyway; the kill also ends one that forged its result and went on
                    self._exited.add(pid)
            else:  # no result: how it ended is the verdict, so wait for it (or kill it at the deadline)
                status = self._end(pid, started + limits.timeout if finished else None)
                finished = finished and status is not None
            reaped = True
            collector.drain_output()
        finally:
            if not reaped:  # the host failed while watching: the child must not outlive this call
                kill_group(pid)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
        timed_out = not finished and not broken
        return assemble(collector.frames, status or 0, limits, timed_out, broken, collector.output(), started)

    @staticmethod
    def _end(pid: int, deadline: float | None) -> int | None:
        """Wait status of a child that closed its result pipe; kill it if it lingers past the deadline."""
        status = wait(pid, deadline) if deadline is not None else None
        if status is None:
            kill_group(pid)
            os.waitpid(pid, 0)
        return status

    def _reap(self) -> None:
        with self._lock:
            self._exited.reap()

    def close(self) -> None:
        with self._lock:
            self._exited.reap(block=True)  # they were sent SIGKILL: this cannot block for long
        remove_tree(self._root)


class Dying:
    """Children sent ``SIGKILL`` and reaped later, each with what to do once it is gone (remove its scratch
    folder, which its mount namespace holds while it lives). A warm worker's child is a copy of a large
    host and takes milliseconds to die; the host goes on meanwhile (a repair's judging child is forked
    right after its tracing child is killed). Until reaped, a child's pid (and so its group's id) stays
    its own: nothing else can be sent the signal meant for it. Not locked: its owner's lock guards it."""

    def __init__(self) -> None:
        self._pending: list[tuple[int, Callable[[], None] | None]] = []

    def add(self, pid: int, then: Callable[[], None] | None = None, reaped: bool = False) -> None:
        """Kill the child ``pid`` and all it started (``reaped``: it is gone already), and ``then`` once it is gone."""
        if reaped:
            if then is not None:
                then()
            return
        kill_group(pid)
        self._pending.append((pid, then))
        self.reap()

    def reap(self, block: bool = False) -> None:
        """Reap those that are gone (with ``block``, wait for each: they were sent SIGKILL, not for long)."""
        left = []
        for pid, then in self._pending:
            try:
                gone = (os.waitpid(pid, 0) if block else _hostcalls.reap(pid))[0] != 0
            except ChildProcessError:
                gone = True
            if not gone:
                left.append((pid, then))
            elif then is not None:
                then()
        self._pending = left


def _has_result(collector: Collector) -> bool:
    for frame in collector.frames:  # noqa: SIM110  # a loop, not any() over a generator: called at each wake-up
        if type(frame) is dict and frame.get("kind") == "result":
            return True
    return False


def _remove(scratch: str) -> None:
    try:
        os.rmdir(scratch)  # the common case: the call wrote nothing
    except OSError:  # what the call left where scratch is no private tmpfs (not root): any shape of tree
        remove_tree(scratch)


def assemble(
    frames: list[Any], status: int, limits: Limits, timed_out: bool, broken: str, output: str, started: float
) -> Outcome:
    """The outcome of one child from what it sent and how it ended."""
    violations = clean_violations([f["reason"] for f in frames if _is(f, "violation") and type(f.get("reason")) is str])
    results = [f for f in frames if _is(f, "result")]
    setups = [clean(f["reason"]) for f in frames if _is(f, "setup") and type(f.get("reason")) is str]
    duration = time.monotonic() - started
    if setups:
        outcome = Outcome("crashed", detail=f"the sandbox could not set up its guards in the child: {setups[0]}")
    elif timed_out:
        outcome = Outcome("timeout", detail=f"exceeded {limits.timeout:g}s; killed", duration=duration)
    elif broken:
        violations += (clean(f"a malformed result channel: {broken}", VIOLATION_LIMIT),)
        outcome = Outcome("refused", detail="", duration=duration)
    elif len(results) == 1:
        outcome = result_outcome(results[0], duration)
        violations += outcome.violations
    elif len(results) > 1:
        violations += (f"the child sent {len(results)} results (a forged frame)",)
        outcome = Outcome("refused", duration=duration)
    else:
        kind, detail = describe_exit(status)
        outcome = Outcome(kind, detail=detail, duration=duration)
        violations += (SECCOMP_KILL,) if kind == "refused" else ()
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        outcome = dataclasses.replace(outcome, status="refused", value=None, detail=f"refused {violations[0]}{more}")
    if not output and not violations and not outcome.output and not outcome.violations:
        return outcome  # nothing to add (most calls): no copy made
    return dataclasses.replace(outcome, output=clean(output, OUTPUT_TEXT_LIMIT), violations=violations)


def _is(frame: Any, kind: str) -> bool:
    return type(frame) is dict and frame.get("kind") == kind


def result_outcome(frame: dict[str, Any], duration: float) -> Outcome:
    """The outcome a result frame of :func:`run_job` says (``refused`` for one that is not one)."""
    try:
        data = {k: frame[k] for k in ("status", "value", "error") if k in frame} | {"duration": duration}
        outcome = outcome_from_data(data)
    except ChannelError as exc:
        return _malformed(str(exc), duration)
    if outcome.status not in ("ok", "error"):
        return _malformed(f"status {outcome.status!r}", duration)
    return outcome


def _malformed(why: str, duration: float) -> Outcome:
    """A result frame that is not one: only a child that forged it sends such a thing."""
    reason = clean(f"a malformed result: {why}", VIOLATION_LIMIT)
    return Outcome("refused", detail=f"refused {reason}", duration=duration, violations=(reason,))


def describe_exit(status: int) -> tuple[Status, str]:
    """Why a child that sent no result ended, from its wait status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if number == signal.SIGSYS:
            return "refused", SECCOMP_KILL
        hint = _SIGNAL_HINTS.get(number)
        detail = f"killed by {name}" + (f" ({hint})" if hint else "")
        return ("timeout" if number == signal.SIGXCPU else "crashed"), detail
    code = os.waitstatus_to_exitcode(status)
    return "crashed", f"exited with status {code} before returning a result (os._exit?)"


def wait(pid: int, deadline: float) -> int | None:
    """The child's wait status once it exits, or None if it is still running at the deadline.

    Whatever is left in its process group is killed before the child is reaped: until then its pid,
    and so the group's id, cannot be reused by an unrelated process.
    """
    delay = 0.0005
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            kill_group(pid)
            return os.waitpid(pid, 0)[1]
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        time.sleep(min(remaining, delay))
        delay = min(delay * 2, 0.02)


def kill_group(pid: int) -> None:
    """SIGKILL to the child's process group (all it started) and to the child (before its ``setsid``)."""
    try:  # noqa: SIM105  # not contextlib.suppress: no objects made in a host whose every write is a copy
        _hostcalls.kill(-pid, _SIGKILL)
    except OSError:  # already gone, or not yet its own group leader
        pass
    try:  # noqa: SIM105
        _hostcalls.kill(pid, _SIGKILL)
    except OSError:
        pass


_SIGKILL = int(signal.SIGKILL)



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

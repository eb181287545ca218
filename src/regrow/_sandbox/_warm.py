"""A warm worker: a guarded child forked from this process that runs named jobs, killed and replaced on overrun.

Forking after the tests are collected and the target imported gives a child that is ready at
once, shares nothing it could spoil with the host, and can be killed outright: a mutant that
loops forever while building an ever larger integer holds the interpreter lock inside a single
C call, where no in-process time limit reaches it. Jobs are the functions handed to the
constructor (closures over the live state are fine: the child has a copy of it).

It is the fork sandbox's child, kept warm, and judged as the fork sandbox judges its children: the same
fork (``_afterfork.fork_armed``), setup and guard (``_child.setup``: session, descriptors, limits, secrets,
scratch, Landlock, capabilities, and for untrusted jobs seccomp and the audit hook), result frame
(``_child.run_job``), reader (``_channel.Collector``) and verdict (``_process.assemble``). What differs is
the life: it reads one job after another from a request pipe, so the fork is paid once, not per candidate.

Candidate code runs in the child, so nothing it sends is trusted: requests and replies are frames of plain
data, never unpickled; the caller's ``read`` checks a reply's shape. A reply that is malformed, oversized
or not for the job running is ``refused``; one that ``read`` rejects, ``crashed``; either kills the child.
Trusted jobs run only the user's own code (tracing the original) in a child of their own without the filter
and the hook. Without ``fork`` the jobs run in this process under the in-process sandbox (time limit only).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import os
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from . import InProcessSandbox, Limits, _guard
from ._afterfork import fork_armed, regrow_locks
from ._base import Outcome, clean
from ._channel import ChannelError, Collector, check_plain, encode, write_frame
from ._child import MESSAGE_LIMIT
from ._child import setup as child_setup
from ._process import Dying, assemble, result_outcome, wait
from ._warm_child import REPLY_LIMIT, serve

_EXTRA_MEMORY = 2 << 30  # address space a child may add to what it started with
_LIMITS = Limits(memory_bytes=_EXTRA_MEMORY, processes=0)  # the timeout is per call; no CPU limit (it adds up)
_REQUEST_LIMIT = 1 << 30  # requests come from the host


@dataclasses.dataclass
class _Call:
    """One job sent to the child, until it is answered."""

    job: str
    request: bytes
    timeout: float
    read: Callable[[Any], Any] | None
    seq: int
    started: float = 0.0  # when the child began it: when it was sent to an idle child, or its predecessor answered
    first: bool = False  # the first job of a fresh child: a death in it is its own, not something earlier left behind


@dataclasses.dataclass
class _Child:
    pid: int
    request: int  # fd the host writes requests to
    reply: int  # fd the host reads replies from
    scratch: str
    guarded: bool = False  # for untrusted jobs: the seccomp filter and the audit hook were in place from the start
    collector: Collector = dataclasses.field(init=False)  # the sandbox's reader of result frames
    frames: list[Any] = dataclasses.field(default_factory=list)  # the current job's frames before its result

    def __post_init__(self) -> None:
        self.collector = Collector(self.reply, None, REPLY_LIMIT, 0)

    def idle(self) -> bool:
        """Whether it has sent nothing since its last answer (a forged or late frame, or its end)."""
        return not self.collector.pending and not self.collector.frames and not self.collector.readable()


class Worker:
    """Runs ``jobs[name](*args)`` in a guarded forked child with a wall-clock limit per call.

    Arguments and results must be plain data (dict with str keys, list, str, int, float, bool,
    None; tuples arrive as lists). ``trusted`` names the jobs that run only the user's own code
    and may need what the audit hook refuses (see the module docstring).

    :meth:`call` runs one job and waits for it. :meth:`send`, :meth:`pump` and :meth:`take` keep
    several jobs in the child's pipe, so that it starts the next the moment it answers one (see
    :mod:`._judges`): their outcomes come back in the order sent. A child that dies, overruns or
    forges a frame costs the job it was running; the jobs queued behind it go to a fresh child.
    """

    def __init__(self, jobs: Mapping[str, Callable[..., Any]], fork: bool | None = None,
                 trusted: Collection[str] = (), fresh: bool = False, views: tuple[str, ...] = (),
                 environ: tuple[str, ...] = ()) -> None:
        self.jobs = dict(jobs)
        self.views = tuple(views)  # folders whose writes go to a throwaway view in the child (Limits.views)
        self.environ = tuple(environ)  # variables the child keeps although named like secrets (Limits.environ_keep)
        self.trusted = frozenset(trusted)
        self.fresh = fresh  # a child per call: no call sees the state an earlier one left (order-dependent tests)
        self.forking = hasattr(os, "fork") if fork is None else fork
        self.forks = 0  # children started, for reports
        self._child: _Child | None = None
        self._flight: collections.deque[_Call] = collections.deque()  # sent, not yet answered, oldest first
        self._done: collections.deque[tuple[str, Any]] = collections.deque()  # outcomes not yet taken
        self._seq = 0
        self._netns = _guard.prepare() if self.forking else None
        self._sandbox = InProcessSandbox()
        self._lock = threading.RLock()
        self._dying = Dying()

    @property
    def depth(self) -> int:
        """How many jobs may wait in its pipe at once (one for a child per call, or in-process)."""
        return 2 if self.forking and not self.fresh else 1

    @property
    def busy(self) -> int:
        """Jobs sent whose outcome has not been taken."""
        return len(self._flight) + len(self._done)

    def call(self, job: str, *args: Any, timeout: float,
             read: Callable[[Any], Any] | None = None) -> tuple[str, Any]:
        """Run one job: ``("ok", result)``, ``("error", message)``, ``("timeout", None)``,
        ``("refused", message)`` (the guard refused an action) or ``("crashed", message)``.

        ``read`` turns the plain result into the caller's type and raises ``ValueError`` (or
        ``TypeError``, ``KeyError``) when it has the wrong shape, which ends the call as ``crashed``.
        Arguments that are not plain data raise :class:`ChannelError` here, in the host.
        """
        with self._lock:
            if self.busy:
                raise RuntimeError("Worker.call with jobs sent and not taken: take() their outcomes first")
            self.send(job, *args, timeout=timeout, read=read)
            return self.take()

    def send(self, job: str, *args: Any, timeout: float, read: Callable[[Any], Any] | None = None) -> None:
        """Hand one job to the child (see :meth:`call` for the arguments); :meth:`take` gives its outcome."""
        if job not in self.jobs:
            raise KeyError(f"the worker has no job named {job!r}")
        with self._lock:
            if not self.forking:
                self._done.append(self._here(job, list(args), timeout, read))
                return
            if self._flight and (self.fresh or (job in self.trusted) != (self._flight[0].job in self.trusted)):
                self._drain()  # one job at a time in a child per call, and a child is of one kind
            self._seq += 1
            request = encode({"job": job, "args": list(args), "seq": self._seq}, _REQUEST_LIMIT, checked=False)
            call = _Call(job, request, timeout, read, self._seq)
            self._flight.append(call)
            self._start([call])

    def take(self) -> tuple[str, Any]:
        """The outcome of the oldest job sent and not yet taken, waiting for it."""
        with self._lock:
            while not self._done:
                if not self._flight:
                    raise RuntimeError("Worker.take with no job sent")
                self.wait(self._flight[0].started + self._flight[0].timeout)
            return self._done.popleft()

    def ready(self) -> int:
        """How many outcomes can be taken without waiting."""
        return len(self._done)

    def fileno(self) -> int | None:
        """What to wait on (``select``) for the child's next frame; ``None`` when no job is running."""
        return self._child.reply if self._child is not None and self._flight else None

    def deadline(self) -> float | None:
        """When the job running now overruns (``None`` when none is running)."""
        return self._flight[0].started + self._flight[0].timeout if self._flight else None

    def wait(self, until: float) -> None:
        """Wait for the child's next frame until ``until`` (at most), then :meth:`pump`."""
        fd = self.fileno()
        if fd is not None:
            remaining = min(until, self.deadline() or until) - time.monotonic()
            if remaining > 0:
                select.select([fd], [], [], remaining)
        self.pump()

    def pump(self) -> None:
        """Read what the child has sent, without waiting: settle the jobs it answered, died in or overran."""
        with self._lock:
            while self._flight and self._child is not None:
                child = self._child
                try:
                    child.collector.poll()
                except (ChannelError, MemoryError) as exc:  # a child that forges or floods the channel
                    self._end(self._verdict(child, broken=str(exc) or "MemoryError while decoding"))
                    continue
                except OSError as exc:
                    self._died(f"; {exc}")
                    continue
                frames, child.collector.frames = child.collector.frames, []
                if not all(self._frame(child, frame) for frame in frames):
                    continue  # the child was replaced: what else it sent is void
                if not child.collector.result_open and self._flight:
                    self._died("")
                    continue
                break
            if self._flight and time.monotonic() >= self._flight[0].started + self._flight[0].timeout:
                if self._child is None:
                    self._fail("timeout", None)
                else:
                    self._end(self._verdict(self._child, timed_out=True))

    def abandon(self) -> None:
        """Drop the jobs sent and not taken, killing the child if it runs one: the next call forks afresh."""
        with self._lock:
            if self._flight:
                self._kill()
            self._flight.clear()
            self._done.clear()

    def renew(self) -> None:
        """End the child: the next call runs in a fresh one, forked from this process as it is now."""
        with self._lock:
            self._drain()
            self._kill()

    # -- the host's side of the channel -------------------------------------------------------

    def _here(self, job: str, args: list[Any], timeout: float, read: Callable[[Any], Any] | None) -> tuple[str, Any]:
        """Run a job in this process, under the in-process sandbox (where there is no ``fork``)."""
        check_plain(args)
        outcome = self._sandbox.call(self.jobs[job], *args, limits=Limits(timeout=timeout))
        if outcome.status == "timeout":
            return "timeout", None
        if not outcome.ok:
            return "error", outcome.reason()
        try:
            check_plain(outcome.value)
        except ChannelError as exc:
            return "error", f"TypeError: return value is {exc}"  # as run_job says it in a child
        return _accept(job, outcome.value, read)

    def _start(self, calls: list[_Call]) -> None:
        """Write ``calls`` to the child: a fresh one if there is none, if it is guarded for the other kind of
        job (a trusted job needs one without the hook; any other one fully guarded from its first
        instruction), or if it wrote something since its last answer (a forged or late frame)."""
        guarded = calls[0].job not in self.trusted
        child = self._child
        if child is not None and len(self._flight) == len(calls) and (child.guarded != guarded or not child.idle()):
            self._kill()
            child = None
        if child is None:
            child = self._child = self._spawn(guarded)
            calls[0].first = len(self._flight) == len(calls)
        if len(self._flight) == len(calls):
            calls[0].started = time.monotonic()
        try:
            for call in calls:
                write_frame(child.request, call.request)
        except OSError as exc:  # it died before reading them
            self._died(f"; {exc}")

    def _frame(self, child: _Child, frame: Any) -> bool:
        """Take one frame of the child's; False once the child was replaced (its later frames are void)."""
        kind = frame.get("kind") if type(frame) is dict else None
        if kind == "violation":  # the audit hook refused an action of the current job
            child.frames.append(frame)
            return True
        if kind == "setup":  # its guard did not apply: it exits without running a job
            child.frames.append(frame)
            self._end(self._verdict(child))
            return False
        if kind != "result":
            return True
        call = self._flight[0]
        if frame.get("seq") != call.seq:
            self._end(self._verdict(child, broken="a result for another job than the one running (a forged frame?)"))
            return False
        if result_outcome(frame, 0.0).status == "refused":  # a result frame that is not one: only a forger sends it
            self._end(self._verdict(child, result=frame))
            return False
        outcome = self._answer(self._verdict(child, result=frame), call)
        child.frames.clear()
        if outcome[0] == "crashed":  # a reply of the wrong shape
            self._fail(*outcome)
            return False
        self._settle(outcome)
        if self.fresh:
            self._kill()
            return False
        return True

    def _verdict(self, child: _Child, result: Any = None, status: int = 0, timed_out: bool = False,
                 broken: str = "") -> Outcome:
        """The running job's outcome, judged as the fork sandbox judges a call (``assemble``): from its
        frames (what the hook refused, a failed setup, its result), how the child ended, whether it
        overran, whether it broke the channel."""
        call = self._flight[0]
        frames = [*child.frames, *([result] if result is not None else [])]
        return assemble(frames, status, Limits(timeout=call.timeout), timed_out, broken, "", call.started)

    @staticmethod
    def _answer(outcome: Outcome, call: _Call) -> tuple[str, Any]:
        if outcome.status == "ok":
            return _accept(call.job, outcome.value, call.read)
        if outcome.status == "error":
            return "error", clean(str(outcome.error), MESSAGE_LIMIT)
        return outcome.status, None if outcome.status == "timeout" else outcome.detail

    def _settle(self, outcome: tuple[str, Any]) -> None:
        self._flight.popleft()
        self._done.append(outcome)
        if self._flight:
            self._flight[0].started = time.monotonic()  # the child goes straight on to the next

    def _end(self, outcome: Outcome) -> None:
        """The running job ends with ``outcome``; the child is killed and the jobs behind it go to a fresh one."""
        self._fail(*self._answer(outcome, self._flight[0]))

    def _fail(self, status: str, detail: Any) -> None:
        self._kill()
        self._settle((status, detail))
        self._resend()

    def _died(self, detail: str) -> None:
        """The child closed its reply pipe. The job it was running is charged with its death, unless the
        child had run others before it (a thread one of them left could have killed it): then that
        job runs again in a fresh child, which tells."""
        child = self._child
        assert child is not None
        status = wait(child.pid, time.monotonic() + 0.5)
        refused = any(frame.get("kind") == "violation" for frame in child.frames)
        outcome = self._verdict(child, status=status or 0) if status is not None else None
        self._kill(reaped=status is not None)
        if not self._flight[0].first and not refused:
            self._resend()
            return
        if outcome is None:
            self._settle(("crashed", f"the worker died: it closed its reply pipe; killed{detail}"))
        elif outcome.status == "crashed":
            self._settle(("crashed", f"the worker died: {outcome.detail}{detail}"))
        else:  # refused: by the audit hook before it died, or killed by the seccomp filter
            self._settle(self._answer(outcome, self._flight[0]))
        self._resend()

    def _resend(self) -> None:
        if self._flight:
            self._start(list(self._flight))

    def _drain(self) -> None:
        """Wait until every job sent has an outcome (kept for :meth:`take`)."""
        while self._flight:
            self.wait(self._flight[0].started + self._flight[0].timeout)

    def _spawn(self, guarded: bool) -> _Child:
        scratch = os.path.realpath(tempfile.mkdtemp(prefix="regrow-worker-"))
        limits = dataclasses.replace(_LIMITS, views=self.views, environ_keep=self.environ)
        plan = _guard.plan(scratch, limits, self._netns, per_call=False)
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        setup = child_setup(plan, (reply_w, None), regrow_locks(), request=request_r, watched=guarded)
        pid = fork_armed(setup, freeze=True)
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            serve(self.jobs, setup, _REQUEST_LIMIT)
        os.close(request_r)
        os.close(reply_w)
        self.forks += 1
        return _Child(pid, request_w, reply_r, scratch, guarded)

    def _kill(self, reaped: bool = False) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        child.collector.close()
        for fd in (child.request, child.reply):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._dying.add(child.pid, functools.partial(shutil.rmtree, child.scratch, ignore_errors=True), reaped)

    def close(self) -> None:
        with self._lock:
            self._flight.clear()  # their outcomes are no longer wanted
            self._done.clear()
            self._kill()
            self._dying.reap(block=True)
            self._sandbox.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _accept(job: str, value: Any, read: Callable[[Any], Any] | None) -> tuple[str, Any]:
    if read is None:
        return "ok", value
    try:
        return "ok", read(value)
    except (ValueError, TypeError, KeyError) as exc:
        return "crashed", f"malformed reply to {job!r}: {exc}"

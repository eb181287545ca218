"""A warm worker: a guarded child forked from this process that runs named jobs, killed and replaced on overrun.

Forking after the tests are collected and the target imported gives a child that is ready at
once, shares nothing it could spoil with the host, and can be killed outright: a mutant that
loops forever while building an ever larger integer holds the interpreter lock inside a single
C call, where no in-process time limit reaches it. Jobs are the functions handed to the
constructor (closures over the live state are fine: the child has a copy of it).

It is the fork sandbox's child, kept warm: the same fork (:func:`regrow._sandbox._afterfork.fork_armed`),
the same setup (:func:`regrow._sandbox._child.setup`), and each job answered with the same result
frame (:func:`regrow._sandbox._child.run_job`: a value of plain data or the error; a job that leaves
a thread running is an error). What differs is the life: it reads one job after another from a
request pipe, so the fork is paid once, not per candidate.

Candidate code runs in the child, so nothing the child sends is trusted. Requests and replies are
length-prefixed frames of plain data (:mod:`regrow._sandbox._channel`): a job takes plain
arguments and returns plain data, and the caller turns the reply back into its own types with a
checking ``read`` function. The host never unpickles anything from the child; a reply that is
malformed, oversized, not of the expected shape or not for the job running kills the child and ends
the call as ``crashed``.

The child guards itself in the at-fork handler (:mod:`regrow._sandbox._afterfork`), before any other
code of the host runs in it:
a session of its own, stdio on ``/dev/null`` and every inherited descriptor closed, new stdio
objects and no lock another thread held, die-with-parent, the empty network namespace where there
is one, no core dumps, address space limited to what it inherited plus 2 GiB, file size limited,
secrets removed from the environment (and the host's environment block zeroed), the working
directory, ``TMPDIR`` and ``tempfile`` (and pytest's ``tmp_path``) on a scratch folder of its own,
Landlock where the kernel has it, private copies of inherited shared memory, no capabilities. A
child for untrusted jobs also gets the seccomp filter and the audit hook there, which refuse
sockets, process starts, ``ctypes``, writes outside scratch, signals to other processes,
``sys.settrace`` and the rest of what the fork sandbox refuses. Trusted jobs are those that run
only the user's own code — tracing the original under its own tests needs ``sys.settrace`` — and
run in a child of their own without the filter and the hook; a job of the other kind gets a fresh
child. An action the hook refuses ends the call as ``refused``, even if the code caught the
exception; a system call the filter refuses kills the child (SIGSYS), which also ends the call as
``refused``. Where ``fork`` does not exist the jobs run in this process under the in-process
sandbox instead (time limit only).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from .._sandbox import InProcessSandbox, Limits, _guard
from .._sandbox._afterfork import fork_armed, regrow_locks
from .._sandbox._base import clean
from .._sandbox._channel import ChannelError, FrameReader, check_plain, decode, encode, write_frame
from .._sandbox._child import MESSAGE_LIMIT
from .._sandbox._child import setup as child_setup
from .._sandbox._fork import describe_exit, kill_group, result_outcome, wait
from ._serve import REPLY_LIMIT, serve

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
    reader: FrameReader = dataclasses.field(default_factory=lambda: FrameReader(REPLY_LIMIT))
    refusals: list[Any] = dataclasses.field(default_factory=list)  # what the audit hook reported in the current job

    def idle(self) -> bool:
        """Whether it has sent nothing since its last answer (a forged or late frame, or its end)."""
        return not self.reader.pending and not select.select([self.reply], [], [], 0)[0]


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
                 trusted: Collection[str] = (), fresh: bool = False) -> None:
        self.jobs = dict(jobs)
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
                    if not select.select([child.reply], [], [], 0)[0]:
                        break
                    data = os.read(child.reply, 1 << 16)
                    if not data:
                        if child.reader.pending:
                            raise ChannelError(f"reply cut inside a frame ({child.reader.pending} bytes)")
                        self._died("")
                        continue
                    for body in child.reader.feed(data):
                        if not self._frame(child, decode(body)):
                            break
                except (ChannelError, MemoryError) as exc:  # a child that forges or floods the channel
                    self._fail("crashed", clean(f"malformed reply from the worker: {exc or type(exc).__name__}"))
                except OSError as exc:
                    self._died(f"; {exc}")
            if self._flight and time.monotonic() >= self._flight[0].started + self._flight[0].timeout:
                refused = _refusals(self._child.refusals) if self._child is not None else ""
                self._fail("refused", refused) if refused else self._fail("timeout", None)

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
        if kind == "violation":
            child.refusals.append(frame.get("reason"))
            return True
        if kind == "setup":  # its guard did not apply: it exits without running a job
            self._fail("crashed", clean(f"the worker could not guard itself: {frame.get('reason')}", MESSAGE_LIMIT))
            return False
        if kind != "result":
            return True
        call = self._flight[0]
        if frame.get("seq") != call.seq:
            self._fail("crashed", "the worker answered another call than the one it was running (a forged frame?)")
            return False
        result = result_outcome(frame, 0.0)  # the fork sandbox's result frame: a value, or an error
        refused = _refusals(child.refusals)
        child.refusals.clear()
        if result.status == "refused":  # a frame that is not a result: only a forger sends one
            self._fail("crashed", f"malformed reply from the worker: {result.violations[0]}")
            return False
        if refused:
            outcome: tuple[str, Any] = ("refused", refused)
        elif result.status == "error":
            outcome = ("error", clean(str(result.error), MESSAGE_LIMIT))
        else:
            outcome = _accept(call.job, result.value, call.read)
            if outcome[0] == "crashed":
                self._fail(*outcome)
                return False
        self._settle(outcome)
        if self.fresh:
            self._kill()
            return False
        return True

    def _settle(self, outcome: tuple[str, Any]) -> None:
        self._flight.popleft()
        self._done.append(outcome)
        if self._flight:
            self._flight[0].started = time.monotonic()  # the child goes straight on to the next

    def _fail(self, status: str, detail: Any) -> None:
        """The running job ends as ``status``; the child is killed and the jobs behind it go to a fresh one."""
        self._kill()
        self._settle((status, detail))
        self._resend()

    def _died(self, detail: str) -> None:
        """The child closed its reply pipe. The job it was running is charged with its death, unless the
        child had run others before it (a thread one of them left could have killed it): then that
        job runs again in a fresh child, which tells."""
        child = self._child
        status = wait(child.pid, time.monotonic() + 0.5) if child is not None else None
        refused = _refusals(child.refusals) if child is not None else ""
        self._kill(reaped=status is not None)
        if not self._flight[0].first and not refused:
            self._resend()
            return
        kind, died = describe_exit(status) if status is not None else ("crashed", "it closed its reply pipe; killed")
        if refused or kind == "refused":
            self._settle(("refused", refused or f"refused {died}"))
        else:
            self._settle(("crashed", f"the worker died: {died}{detail}"))
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
        plan = _guard.plan(scratch, _LIMITS, self._netns, per_call=False)
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
        if not reaped:
            kill_group(child.pid)  # the child and anything it started
            with contextlib.suppress(OSError):
                os.waitpid(child.pid, 0)
        for fd in (child.request, child.reply):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(child.scratch, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._flight.clear()  # their outcomes are no longer wanted
            self._done.clear()
            self._kill()
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


def _refusals(reported: list[Any]) -> str:
    """What the audit hook refused during the call, as one line ("" if nothing)."""
    if not reported:
        return ""
    reasons = [reason for reason in reported if type(reason) is str] or ["(no reason given)"]
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"refused {clean(reasons[0], MESSAGE_LIMIT)}{more}"

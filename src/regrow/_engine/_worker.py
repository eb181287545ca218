"""A warm worker: a guarded child forked from this process that runs named jobs, killed and replaced on overrun.

Forking after the tests are collected and the target imported gives a child that is ready at
once, shares nothing it could spoil with the host, and can be killed outright: a mutant that
loops forever while building an ever larger integer holds the interpreter lock inside a single
C call, where no in-process time limit reaches it. Jobs are the functions handed to the
constructor (closures over the live state are fine: the child has a copy of it).

Candidate code runs in the child, so nothing the child sends is trusted. Requests and replies are
length-prefixed frames of plain data (:mod:`regrow._sandbox._channel`): a job takes plain
arguments and returns plain data, and the caller turns the reply back into its own types with a
checking ``read`` function. The host never unpickles anything from the child; a reply that is
malformed, oversized or not of the expected shape kills the child and ends the call as ``crashed``.

The child guards itself with the fork sandbox's guard (:mod:`regrow._sandbox._guard`), in the
at-fork handler (:mod:`regrow._sandbox._afterfork`), before any other code of the host runs in it:
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

import contextlib
import dataclasses
import gc
import os
import select
import shutil
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, NoReturn

from .._sandbox import InProcessSandbox, Limits, _guard
from .._sandbox._afterfork import arm, armed_setup_ran, disarm, regrow_locks
from .._sandbox._base import clean
from .._sandbox._channel import ChannelError, FrameReader, check_plain, decode, encode, write_frame
from .._sandbox._fork import describe_exit, kill_group, wait
from ._serve import MESSAGE_LIMIT, REPLY_LIMIT, answer, child_setup, unfit

_EXTRA_MEMORY = 2 << 30  # address space a child may add to what it started with
_LIMITS = Limits(memory_bytes=_EXTRA_MEMORY, processes=0)  # the timeout is per call; no CPU limit (it adds up)
_REQUEST_LIMIT = 1 << 30  # requests come from the host

_FORKING = threading.Lock()
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


@dataclasses.dataclass
class _Child:
    pid: int
    request: int  # fd the host writes requests to
    reply: int  # fd the host reads replies from
    scratch: str
    guarded: bool = False  # for untrusted jobs: the seccomp filter and the audit hook were in place from the start
    reader: FrameReader = dataclasses.field(default_factory=lambda: FrameReader(REPLY_LIMIT))
    results: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # answers in the current call
    refusals: list[Any] = dataclasses.field(default_factory=list)  # what the audit hook reported in it
    open: bool = True  # the reply pipe has not ended

    def collect(self, deadline: float) -> bool:
        """Read frames until the answer or the end of the pipe (True) or the deadline (False).

        ``ChannelError`` for a frame that is malformed, too large or cut short.
        """
        while self.open and not self.results:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.reply], [], [], remaining)[0]:
                return False
            data = os.read(self.reply, 1 << 16)
            if not data:
                self.open = False
                if self.reader.pending:
                    raise ChannelError(f"reply cut inside a frame ({self.reader.pending} bytes)")
            for body in self.reader.feed(data):
                frame = decode(body)
                kind = frame.get("kind") if type(frame) is dict else None
                if kind == "result":
                    self.results.append(frame)
                elif kind == "violation":
                    self.refusals.append(frame.get("reason"))
        return True

    def idle(self) -> bool:
        """Whether it has sent nothing since its last answer (a forged or late frame, or its end)."""
        return not self.reader.pending and not select.select([self.reply], [], [], 0)[0]


class Worker:
    """Runs ``jobs[name](*args)`` in a guarded forked child with a wall-clock limit per call.

    Arguments and results must be plain data (dict with str keys, list, str, int, float, bool,
    None; tuples arrive as lists). ``trusted`` names the jobs that run only the user's own code
    and may need what the audit hook refuses (see the module docstring).
    """

    def __init__(self, jobs: Mapping[str, Callable[..., Any]], fork: bool | None = None,
                 trusted: Collection[str] = (), fresh: bool = False) -> None:
        self.jobs = dict(jobs)
        self.trusted = frozenset(trusted)
        self.fresh = fresh  # a child per call: no call sees the state an earlier one left (order-dependent tests)
        self.forking = hasattr(os, "fork") if fork is None else fork
        self.forks = 0  # children started, for reports
        self._child: _Child | None = None
        self._netns = _guard.prepare() if self.forking else None
        self._sandbox = InProcessSandbox()
        self._lock = threading.Lock()

    def call(self, job: str, *args: Any, timeout: float,
             read: Callable[[Any], Any] | None = None) -> tuple[str, Any]:
        """Run one job: ``("ok", result)``, ``("error", message)``, ``("timeout", None)``,
        ``("refused", message)`` (the guard refused an action) or ``("crashed", message)``.

        ``read`` turns the plain result into the caller's type and raises ``ValueError`` (or
        ``TypeError``, ``KeyError``) when it has the wrong shape, which ends the call as ``crashed``.
        Arguments that are not plain data raise :class:`ChannelError` here, in the host.
        """
        if job not in self.jobs:
            raise KeyError(f"the worker has no job named {job!r}")
        with self._lock:
            if not self.forking:
                check_plain(list(args))
                outcome = self._sandbox.call(self.jobs[job], *args, limits=Limits(timeout=timeout))
                if outcome.status == "timeout":
                    return "timeout", None
                if not outcome.ok:
                    return "error", outcome.reason()
                try:
                    check_plain(outcome.value)
                except ChannelError as exc:
                    return "error", unfit(job, exc)
                return _accept(job, outcome.value, read)
            request = encode({"job": job, "args": list(args)}, _REQUEST_LIMIT, checked=False)
            try:
                return self._call_child(job, request, timeout, read)
            finally:
                if self.fresh:
                    self._kill()

    def renew(self) -> None:
        """End the child: the next call runs in a fresh one, forked from this process as it is now."""
        with self._lock:
            self._kill()

    def _call_child(self, job: str, request: bytes, timeout: float,
                    read: Callable[[Any], Any] | None) -> tuple[str, Any]:
        child = self._ready(job)
        try:
            write_frame(child.request, request)
            done = child.collect(time.monotonic() + timeout)
        except (ChannelError, MemoryError) as exc:  # a child that forges or floods the channel
            self._kill()
            return "crashed", clean(f"malformed reply from the worker: {exc or type(exc).__name__}")
        except OSError as exc:
            kind, died = self._end()
            return ("refused" if kind == "refused" else "crashed"), clean(f"the worker died: {died}; {exc}")
        refused, results = _refusals(child.refusals), child.results
        if not done:
            self._kill()
            return ("refused", refused) if refused else ("timeout", None)
        if not results:  # it closed its end of the pipe: it died, or a candidate closed the pipe
            kind, died = self._end()
            if refused or kind == "refused":
                return "refused", refused or f"refused {died}"
            return "crashed", f"the worker died: {died}"
        if len(results) > 1:
            self._kill()
            return "crashed", f"the worker sent {len(results)} replies to one call (a forged frame?)"
        answer = results[0]
        status = answer.get("status")
        if not (status == "ok" and "value" in answer) and not (status == "error" and type(answer.get("reason")) is str):
            self._kill()
            return "crashed", "malformed reply from the worker: not an answer"
        if refused:
            return "refused", refused
        if status == "error":
            return "error", clean(answer["reason"], MESSAGE_LIMIT)
        outcome = _accept(job, answer["value"], read)
        if outcome[0] == "crashed":
            self._kill()
        return outcome

    def _ready(self, job: str) -> _Child:
        """The child to run ``job`` in: a fresh one if there is none, if it is guarded for the other kind of
        job (a trusted job needs one without the hook; any other one fully guarded from its first
        instruction), or if it wrote something between calls (a forged or late frame)."""
        guarded = job not in self.trusted
        child = self._child
        if child is not None and (child.guarded != guarded or not child.idle()):
            self._kill()
            child = None
        if child is None:
            child = self._child = self._spawn(guarded)
        child.results.clear()
        child.refusals.clear()
        return child

    def _spawn(self, guarded: bool) -> _Child:
        scratch = os.path.realpath(tempfile.mkdtemp(prefix="regrow-worker-"))
        plan = _guard.plan(scratch, _LIMITS, self._netns, per_call=False)
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        ends = [request_r, reply_w]  # the child's own numbers for them, once it has moved them
        setup = child_setup(plan, ends, guarded, regrow_locks())
        pid = -1
        # One fork at a time in this process: the at-fork handler's setup, the frozen heap and the warnings
        # filter are the process's, and workers judging at once (see ._judges) respawn from their threads.
        # Released in the parent only: the child's copy is re-made in the at-fork handler (regrow's locks).
        _FORKING.acquire()
        try:
            # Frozen objects are left alone by the child's collector, which would otherwise touch (and so
            # copy) every page of the parent's heap.
            gc.freeze()
            arm(setup)  # the child guards itself in the at-fork handler, before any handler registered after regrow's
            try:
                with warnings.catch_warnings():  # 3.12 warns about fork in a threaded process; the child
                    warnings.simplefilter("ignore", DeprecationWarning)  # only runs our jobs, then _exit
                    pid = os.fork()
            finally:
                disarm()
                if pid != 0:
                    gc.unfreeze()
        finally:
            if pid != 0:
                _FORKING.release()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            _serve(self.jobs, ends, setup)
        os.close(request_r)
        os.close(reply_w)
        self.forks += 1
        return _Child(pid, request_w, reply_r, scratch, guarded)

    def _end(self) -> tuple[str, str]:
        """Reap a child that closed its reply pipe (killed if it lingers); how it ended (kind, detail)."""
        child = self._child
        if child is None:
            return "crashed", "gone"
        status = wait(child.pid, time.monotonic() + 0.5)
        self._kill(reaped=status is not None)
        return describe_exit(status) if status is not None else ("crashed", "it closed its reply pipe; killed")

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


# -- in the child -----------------------------------------------------------------------------


def _serve(jobs: Mapping[str, Callable[..., Any]], ends: list[int],
           setup: Callable[[], None]) -> NoReturn:  # pragma: no cover - runs in the child
    """The child's life: guarded already (or now, where no at-fork handler ran), run each job asked for
    and answer, until the host closes the pipe."""
    global _in_child
    _in_child = True
    code = 0
    try:
        if not armed_setup_ran():
            setup()
        request, reply = ends
        reader = FrameReader(_REQUEST_LIMIT)
        while data := os.read(request, 1 << 16):
            for body in reader.feed(data):
                message = decode(body)
                write_frame(reply, answer(jobs, message["job"], message["args"]))
    except BaseException:
        code = 1
    finally:
        os._exit(code)

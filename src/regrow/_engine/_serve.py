"""What a warm worker's child does (see :mod:`._worker`): guard itself at fork, own its descriptors,
answer each job with a frame of plain data, and bound a job's steps in time. Everything here runs in
the child."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import signal
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

from .._pytest_runner import use_temp_root
from .._sandbox import _guard
from .._sandbox._afterfork import armed_setup_ran, fresh_process
from .._sandbox._channel import ChannelError, FrameReader, decode, encode, write_frame
from .._sandbox._child import close_all_but, follow_cwd

REPLY_LIMIT = 32 << 20  # bytes of one reply frame; a larger one (or replies that decode to more) kills the child
MESSAGE_LIMIT = 4000

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


def child_setup(plan: _guard.Plan, ends: list[int], guarded: bool,
                 locks: tuple[Any, ...]) -> Callable[[], None]:  # pragma: no cover - runs in the child
    """What a worker child does first, in the at-fork handler: its own fds and session, nothing another
    thread held, the guard (with the seccomp filter and the audit hook, for a ``guarded`` child). A
    guard that fails to apply ends the child (the host sees its reply pipe close)."""

    def guard_child() -> None:
        try:
            ends[0], ends[1], own = own_fds(ends[0], ends[1], plan)
            fresh_process(locks)
            follow_cwd(own.scratch)
            _guard.confine(own)
            if own.netns_fd is not None:
                os.close(own.netns_fd)
            use_temp_root(own.scratch)
            if guarded:
                _guard.watch(own, ends[1])  # last: nothing after it may use ctypes
        except BaseException:
            os._exit(1)

    return guard_child


def own_fds(request: int, reply: int, plan: _guard.Plan) -> tuple[int, int, _guard.Plan]:  # pragma: no cover
    """stdin/stdout/stderr on /dev/null and every other inherited fd closed: an fd on the host's
    database, log or socket would let a candidate write to it with no open for the guard to see."""
    os.setsid()  # no terminal (Ctrl-C is for the host, which then closes the worker) and one group to kill
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (request, reply)]  # out of the way of 0-2
    netns = fcntl.fcntl(plan.netns_fd, fcntl.F_DUPFD, 10) if plan.netns_fd is not None else None
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    close_all_but({0, 1, 2, *high} | ({netns} if netns is not None else set()))
    return high[0], high[1], dataclasses.replace(plan, netns_fd=netns)


def serve(jobs: Mapping[str, Callable[..., Any]], ends: list[int], setup: Callable[[], None],
          limit: int) -> NoReturn:  # pragma: no cover - runs in the child
    """The child's life: guarded already (or now, where no at-fork handler ran), run each job asked for
    and answer, in the order asked, until the host closes the pipe."""
    global _in_child
    _in_child = True
    code = 0
    try:
        if not armed_setup_ran():
            setup()
        request, reply = ends
        reader = FrameReader(limit)
        while data := os.read(request, 1 << 16):
            for body in reader.feed(data):
                message = decode(body)
                write_frame(reply, answer(jobs, message["job"], message["args"], message["seq"]))
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def answer(jobs: Mapping[str, Callable[..., Any]], job: str, args: list[Any],
           seq: int) -> bytes:  # pragma: no cover - runs in the child
    """The reply frame to job ``seq``: its value, or why it failed."""
    try:
        value = jobs[job](*args)
    except BaseException as exc:  # the job's failure is an answer, not the end of the worker
        return _error_frame(f"{type(exc).__name__}: {_text(exc)}", seq)
    try:
        return encode({"kind": "result", "seq": seq, "status": "ok", "value": value}, REPLY_LIMIT)
    except ChannelError as exc:
        return _error_frame(unfit(job, exc), seq)


def _error_frame(reason: str, seq: int) -> bytes:  # pragma: no cover - runs in the child
    return encode({"kind": "result", "seq": seq, "status": "error", "reason": reason[:MESSAGE_LIMIT]}, REPLY_LIMIT)


def _text(exc: BaseException) -> str:  # pragma: no cover - runs in the child
    try:
        return str(exc)
    except BaseException:  # a hostile __str__
        return f"<unprintable {type(exc).__name__}>"


def unfit(job: str, exc: ChannelError) -> str:
    return f"the {job!r} job's result cannot cross to the host: {exc}"

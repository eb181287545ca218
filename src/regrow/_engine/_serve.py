"""What a warm worker's child does (see :mod:`._worker`): guard itself at fork, own its descriptors,
answer each job with a frame of plain data. Everything here runs in the child."""

from __future__ import annotations

import dataclasses
import fcntl
import os
from collections.abc import Callable, Mapping
from typing import Any

from .._pytest_runner import use_temp_root
from .._sandbox import _guard
from .._sandbox._afterfork import fresh_process
from .._sandbox._channel import ChannelError, encode
from .._sandbox._child import close_all_but, follow_cwd

REPLY_LIMIT = 32 << 20  # bytes of one reply frame; a larger one (or replies that decode to more) kills the child
MESSAGE_LIMIT = 4000


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


def answer(jobs: Mapping[str, Callable[..., Any]], job: str, args: list[Any]) -> bytes:  # pragma: no cover
    try:
        value = jobs[job](*args)
    except BaseException as exc:  # the job's failure is an answer, not the end of the worker
        return _error_frame(f"{type(exc).__name__}: {_text(exc)}")
    try:
        return encode({"kind": "result", "status": "ok", "value": value}, REPLY_LIMIT)
    except ChannelError as exc:
        return _error_frame(unfit(job, exc))


def _error_frame(reason: str) -> bytes:  # pragma: no cover - runs in the child
    return encode({"kind": "result", "status": "error", "reason": reason[:MESSAGE_LIMIT]}, REPLY_LIMIT)


def _text(exc: BaseException) -> str:  # pragma: no cover - runs in the child
    try:
        return str(exc)
    except BaseException:  # a hostile __str__
        return f"<unprintable {type(exc).__name__}>"


def unfit(job: str, exc: ChannelError) -> str:
    return f"the {job!r} job's result cannot cross to the host: {exc}"

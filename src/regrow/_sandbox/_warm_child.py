"""What a warm worker's child does (see :mod:`._worker`) once it has guarded itself as every sandbox
child does (:func:`regrow._sandbox._child.setup`): answer each job with the sandbox's result frame,
and bound a job's steps in time. Everything here runs in the child."""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

from ._afterfork import armed_setup_ran
from ._channel import FrameReader, decode, write_frame
from ._child import pipes, resume, run_job

REPLY_LIMIT = 32 << 20  # bytes of one reply frame; a larger one (or replies that decode to more) kills the child

_in_child = False  # set in a forked worker, where jobs run on the main thread and SIGALRM is ours


class Overrun(BaseException):
    """Raised inside a job step that overran the limit set with :func:`time_limit`; ``cpu``: one of
    :func:`cpu_limit` (the kernel's CPU timer may strike before ``time.process_time()`` shows the limit
    reached: it charges whole ticks, by far on a loaded machine)."""

    cpu = False


class _CpuOverrun(Overrun):
    cpu = True


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the code inside with :class:`Overrun` after ``seconds`` (main thread of a worker only).

    Limits nest: inside another one (a test's own limit inside its candidate's), the inner strikes at
    whichever comes first, and the outer goes on counting from where it was."""
    with _limit(seconds, signal.ITIMER_REAL, signal.SIGALRM, time.monotonic):
        yield


@contextlib.contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """:func:`time_limit` counted in this process's CPU time (``ITIMER_PROF``): a loop that never ends is
    stopped after ``seconds`` of work however loaded the machine is, where a wall-clock limit must allow
    for the time the process waits for a core. It nests with other CPU limits, and beside wall ones."""
    with _limit(seconds, signal.ITIMER_PROF, signal.SIGPROF, time.process_time):
        yield


@contextlib.contextmanager
def _limit(seconds: float, which: int, signum: int, clock: Callable[[], float]) -> Iterator[None]:
    if not _in_child:
        yield
        return

    def overrun(signum: int, frame: object) -> None:
        raise _CpuOverrun if which == signal.ITIMER_PROF else Overrun

    outer, _ = signal.getitimer(which)  # seconds left of an enclosing limit (0: none)
    started = clock()
    previous = _signal.signal(signum, overrun)  # not signal's wrapper: it makes enums of both, per candidate
    signal.setitimer(which, min(seconds, outer) if outer > 0 else seconds)
    try:
        yield
    finally:
        signal.setitimer(which, 0)
        _signal.signal(signum, previous)
        if outer > 0:  # spent already: it strikes at once
            signal.setitimer(which, max(outer - (clock() - started), 1e-4))


def serve(jobs: Mapping[str, Callable[..., Any]], setup: Callable[[], None],
          limit: int) -> NoReturn:  # pragma: no cover - runs in the child
    """The child's life: guarded already (or now, where no at-fork handler ran), run each job asked for
    and answer, in the order asked, until the host closes the pipe.

    Each answer is the fork sandbox's result frame (:func:`regrow._sandbox._child.run_job`: the value as
    plain data or the error, and a job that leaves a thread running is an error), with the job's
    ``seq``; between jobs, signals and the collector are back on (:func:`~regrow._sandbox._child.resume`).
    """
    global _in_child
    _in_child = True
    code = 0
    try:
        if not armed_setup_ran():
            setup()
        request, reply = pipes()
        reader = FrameReader(limit)
        while data := os.read(request, 1 << 16):
            for body in reader.feed(data):
                message = decode(body)
                write_frame(reply, run_job(_bound(jobs, message["job"], message["args"]), REPLY_LIMIT,
                                           seq=message["seq"]))
                resume()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _bound(jobs: Mapping[str, Callable[..., Any]], name: str, args: list[Any]) -> Callable[[], Any]:  # pragma: no cover
    return lambda: jobs[name](*args)

"""Per-test time limits while the engine screens candidates (issue 24).

A candidate that hangs used to cost the whole candidate time limit, a few seconds, however quick
the test it hung in was on the original. Within :func:`per_test_limits` each named check or pytest
test runs under a limit of its own (the engine derives it from that test's time on the original,
see :meth:`regrow._checks._spectrum.Spectrum.test_limits`), so a hang costs about that much. Each
test may have a CPU-time limit too (a multiple of its CPU time on the original, with a floor far below
the wall-clock one): a loaded machine stalls a test's wall clock but hardly its CPU time, so a loop
that never ends is stopped after a tenth of a second of work where the wall-clock limit must wait a
second for it. The limiters themselves are handed in (the engine's worker interrupts with ``SIGALRM``
and ``SIGPROF``); this module only decides when a run overran. A test's first run in a process pays for
warm-up that its time on the original may not show: one through pytest's protocol (module fixtures) is
not limited, one called directly (a fresh fork's copied pages only) runs under a multiple of its limits.
The session's final proof runs every check without these limits.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TypeVar

from .._sandbox import SandboxTimeout
from ._pytest_runner import Suite, TestResult

T = TypeVar("T")


class TestOverrun(Exception):
    """A test ran past its own limit (raised as the check's failure)."""

    __test__ = False


Limiter = Callable[[float], AbstractContextManager[None]]


@dataclasses.dataclass(frozen=True)
class _Limits:
    seconds: Mapping[str, float]
    limiter: Limiter
    cpu: Mapping[str, float]
    cpu_limiter: Limiter | None


_LIMITS: contextvars.ContextVar[_Limits | None] = contextvars.ContextVar("regrow_test_limits", default=None)
_CPU_SLACK = 0.8  # share of a CPU limit that counts as reaching it
_warm: set[str] = set()  # tests that ran once in this process: their later runs are limited
_FIRST_RUN = 3.0  # a directly called test's first run in a process: this multiple of its limits


@contextlib.contextmanager
def per_test_limits(seconds: Mapping[str, float], limiter: Limiter, cpu: Mapping[str, float] | None = None,
                    cpu_limiter: Limiter | None = None) -> Iterator[None]:
    """Within: the check or test named ``name`` runs under ``limiter(seconds[name])``, and under
    ``cpu_limiter(cpu[name])`` (CPU seconds) if both are given (from its second run in this process on);
    an overrun of either fails it with a :class:`TestOverrun`. Names without a limit run as before."""
    cpu = dict(cpu or {}) if cpu_limiter is not None else {}
    token = _LIMITS.set(_Limits(dict(seconds), limiter, cpu, cpu_limiter) if seconds or cpu else None)
    try:
        yield
    finally:
        _LIMITS.reset(token)


def limited(name: str, run: Callable[[], T], failed: Callable[[T], bool] = lambda result: False,
            warmup: bool = True) -> T:
    """``run()`` under the limits of ``name``, if it has any: :class:`TestOverrun` when it overran, whether it
    raised then or (a test runner that catches everything) returned a result that ``failed``.

    A first run in this process that may pay for setting up fixtures (``warmup``) is not limited; one that
    pays only for a fresh fork's first touch of memory (a test called directly) runs under
    ``_FIRST_RUN`` times its limits."""
    limits = _LIMITS.get()
    seconds = limits.seconds.get(name) if limits is not None else None
    cpu = limits.cpu.get(name) if limits is not None else None
    if limits is None or (seconds is None and cpu is None):
        return run()
    if name not in _warm:
        _warm.add(name)
        if warmup:
            return run()
        seconds = seconds * _FIRST_RUN if seconds is not None else None
        cpu = cpu * _FIRST_RUN if cpu is not None else None
    started, cpu_started = time.monotonic(), time.process_time()

    def overran() -> str | None:
        if seconds is not None and time.monotonic() - started >= seconds:
            return _overran(name, seconds)
        # The CPU timer is sampled at the kernel's ticks: it may strike a few ms before the clock shows it.
        if cpu is not None and time.process_time() - cpu_started >= cpu * _CPU_SLACK:
            return _overran(name, cpu, " of CPU")
        return None

    try:
        with contextlib.ExitStack() as stack:
            if seconds is not None:
                stack.enter_context(limits.limiter(seconds))
            if cpu is not None and limits.cpu_limiter is not None:
                stack.enter_context(limits.cpu_limiter(cpu))
            result = run()
    except SandboxTimeout:
        raise
    except BaseException as exc:  # a limiter's own interrupt, or the test's failure
        if (why := overran()) is None:
            if cpu is None or getattr(exc, "cpu", False) is not True:
                raise
            why = _overran(name, cpu, " of CPU")  # the CPU limiter struck: no other one is set inside a test
        raise TestOverrun(why) from exc
    if failed(result) and (why := overran()) is not None:
        raise TestOverrun(why)
    return result


def _overran(name: str, seconds: float, clock: str = "") -> str:
    return f"{name} did not finish in {seconds:.2g}s{clock} (its own limit, from its time on the original)"


def run_test(suite: Suite, nodeid: str) -> TestResult:
    """One collected test, under its own limit if it has one (an overrun is a failed result). While
    candidates are screened (limits in force) a unittest test ends at its first failed subtest."""
    screening = _LIMITS.get() is not None
    try:
        return limited(nodeid, lambda: suite.run(nodeid, failfast=screening), lambda result: not result.passed,
                       warmup=not suite.direct(nodeid))
    except TestOverrun as exc:
        return TestResult(nodeid, False, str(exc))

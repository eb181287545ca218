"""Per-test time limits while the engine screens candidates (issue 24).

A candidate that hangs used to cost the whole candidate time limit, a few seconds, however quick
the test it hung in was on the original. Within :func:`per_test_limits` each named check or pytest
test runs under a limit of its own (the engine derives it from that test's time on the original,
see :meth:`regrow._checks._spectrum.Spectrum.test_limits`), so a hang costs about that much. The
limiter itself is handed in (the engine's worker interrupts with ``SIGALRM``); this module only
decides when a run overran. A test's first run in a process is not limited: it pays for warm-up
(imports, module fixtures, a fresh fork's copied pages) that its time on the original may not show.
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


@dataclasses.dataclass(frozen=True)
class _Limits:
    seconds: Mapping[str, float]
    limiter: Callable[[float], AbstractContextManager[None]]


_LIMITS: contextvars.ContextVar[_Limits | None] = contextvars.ContextVar("regrow_test_limits", default=None)
_warm: set[str] = set()  # tests that ran once in this process: their later runs are limited


@contextlib.contextmanager
def per_test_limits(seconds: Mapping[str, float],
                    limiter: Callable[[float], AbstractContextManager[None]]) -> Iterator[None]:
    """Within: the check or test named ``name`` runs under ``limiter(seconds[name])`` (from its second run in
    this process on); an overrun fails it with a :class:`TestOverrun`. Names without a limit run as before."""
    token = _LIMITS.set(_Limits(dict(seconds), limiter) if seconds else None)
    try:
        yield
    finally:
        _LIMITS.reset(token)


def limited(name: str, run: Callable[[], T], failed: Callable[[T], bool] = lambda result: False) -> T:
    """``run()`` under the limit of ``name``, if it has one: :class:`TestOverrun` when it overran, whether it
    raised then or (a test runner that catches everything) returned a result that ``failed``."""
    limits = _LIMITS.get()
    seconds = limits.seconds.get(name) if limits is not None else None
    if limits is None or seconds is None or name not in _warm:
        _warm.add(name)
        return run()
    started = time.monotonic()
    try:
        with limits.limiter(seconds):
            result = run()
    except SandboxTimeout:
        raise
    except BaseException as exc:  # the limiter's own interrupt, or the test's failure
        if time.monotonic() - started < seconds:
            raise
        raise TestOverrun(_overran(name, seconds)) from exc
    if time.monotonic() - started >= seconds and failed(result):
        raise TestOverrun(_overran(name, seconds))
    return result


def _overran(name: str, seconds: float) -> str:
    return f"{name} did not finish in {seconds:.2g}s (its own limit, from its time on the original)"


def run_test(suite: Suite, nodeid: str) -> TestResult:
    """One collected test, under its own limit if it has one (an overrun is a failed result)."""
    try:
        return limited(nodeid, lambda: suite.run(nodeid), lambda result: not result.passed)
    except TestOverrun as exc:
        return TestResult(nodeid, False, str(exc))

"""The differential guard: a fix must keep what the original did wherever the original worked.

Inputs near the failing call come from :mod:`regrow._checks._nearby`; the original is run on each in the
sandbox, and what it did is kept as a *key* — a digest of the plain-data result and of the
arguments after the call, or the exception type it raised. The candidate is then judged on the same
calls, and the comparison runs in the host on those keys (see :mod:`regrow._checks._transcript`), so a
result that only claims to be equal is not.

Two strengths:

- ``strict`` (no ``verify=``, ``tests=`` or ``record=``): on every call where the original returned,
  the fix must return the same; where the original raised on every call, a fix that returns one
  constant throughout (``return 0``) is refused.
- otherwise (an oracle decides what is right): only overfitting is refused — one constant on
  calls where the original's results varied (a lookup table of the tests' inputs falls back to
  one), or raising on most calls where the original returned.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import threading
import time
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._plain import digest, encode, type_name
from ._evaluate import evaluating
from ._oracles import BaseCheck, Check, CheckFailed, _call, _fresh

if TYPE_CHECKING:
    from .._target._target import Target

CallArgs = tuple[tuple[Any, ...], Mapping[str, Any]]
_PER_CALL = 0.25  # seconds the original may take on one derived call (where a timer can interrupt it)
_HOST_PID = os.getpid()  # the timer below is armed only in a forked child, never in the user's process


def outcome_key(value: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """What one call did, comparable across processes: its result and its arguments after it."""
    return f"returned {digest(encode(value))} with arguments {digest(encode([list(args), dict(kwargs)]))}"


def _value(key: str) -> str:
    """The result part of a key (what was returned, not what became of the arguments)."""
    return key.partition(" with arguments ")[0]


def raised_key(exc: BaseException) -> str:
    return f"raised {type_name(type(exc))}"


class _Overrun(BaseException):
    """One derived call took too long (a ``BaseException``: the function's ``except Exception`` lets it by)."""


@contextlib.contextmanager
def _call_limit(seconds: float) -> Iterator[None]:
    """Stop one call after ``seconds`` where a timer can (the main thread of a forked sandbox child).

    A timer already running (an outer limit) is put back afterwards with the time it has left.
    """
    if (os.getpid() == _HOST_PID or threading.current_thread() is not threading.main_thread()
            or not hasattr(signal, "setitimer")):
        yield
        return

    def overrun(signum: int, frame: object) -> None:
        raise _Overrun

    started = time.monotonic()
    outer, _ = signal.getitimer(signal.ITIMER_REAL)
    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


def observe(fn: Any, calls: Sequence[CallArgs], limit: float | None = None) -> list[str | None]:
    """What ``fn`` does on each call (a key, see :func:`outcome_key`); with ``limit`` (seconds per
    call, in a sandbox child) ``None`` where it took too long."""
    keys: list[str | None] = []
    for args, kwargs in calls:
        fresh_args, fresh_kwargs = _fresh(tuple(args), kwargs)
        try:
            with _call_limit(limit) if limit else contextlib.nullcontext():
                value = _call(fn, fresh_args, fresh_kwargs)
            keys.append(outcome_key(value, fresh_args, fresh_kwargs))
        except _Overrun:
            keys.append(None)
        except Exception as exc:
            keys.append(raised_key(exc))
    return keys


def original_job(target: Target, calls: Sequence[CallArgs]) -> dict[str, Any]:
    """The sandbox job: the original's keys on ``calls``, and whether the first call changes its arguments."""
    original = types.FunctionType(target.original_code, target.func.__globals__, target.name,
                                  target.original_defaults, target.func.__closure__)
    original.__kwdefaults__ = target.original_kwdefaults
    if target.entry is not None:  # through the decorator heal stands above; the live function is the original here
        original = target.entry  # type: ignore[assignment]
    with evaluating():
        keys = observe(original, calls, _PER_CALL)
        mutates = False
        if calls:
            args, kwargs = _fresh(tuple(calls[0][0]), calls[0][1])
            before = encode([list(args), kwargs])
            with contextlib.suppress(Exception, _Overrun), _call_limit(_PER_CALL):
                _call(original, args, kwargs)
            mutates = encode([list(args), kwargs]) != before
    return {"keys": keys, "mutates": mutates}


class Differential(BaseCheck):
    """The guard as a check: see the module docstring. ``expected`` holds the original's keys."""

    name = "differential"
    cost = 20
    replayable = True

    def __init__(self, calls: Sequence[CallArgs], expected: Sequence[str | None], strict: bool) -> None:
        kept = [(call, key) for call, key in zip(calls, expected, strict=True) if key is not None]
        self.calls = [call for call, _ in kept]
        self.expected = [key for _, key in kept]
        self.strict = strict

    def split(self) -> list[Check]:
        """No runs for fault localization: this guard is not evidence of where the fault is (and its
        quick calls would pull the engine's time limit per candidate down to the floor)."""
        return []

    @property
    def returning(self) -> int:
        """How many calls the original returned on: what a strict guard can compare."""
        return sum(key.startswith("returned ") for key in self.expected)

    def __call__(self, fn: Any) -> None:
        got = [key or "timeout" for key in observe(fn, self.calls)]
        returned = [(before, after) for before, after in zip(self.expected, got, strict=True)
                    if before.startswith("returned ")]
        if self.strict:
            changed = sum(before != after for before, after in returned)
            if changed:
                raise CheckFailed(f"changes the result on {changed} of the {len(returned)} inputs near the failing "
                                  "call where the original returned: it changes the function, not the fault")
            if not returned and len({_value(key) for key in got}) == 1 and got[0].startswith("returned "):
                raise CheckFailed("returns the same for every input near the failing call (where the original "
                                  "raised on all): that discards the function's logic rather than fixing it")
            return
        outputs = collections.Counter(_value(after) for _, after in returned)
        if len(returned) >= 4 and len({_value(before) for before, _ in returned}) > 1 and len(outputs) == 1 \
                and next(iter(outputs)).startswith("returned "):
            raise CheckFailed(f"returns the same for all {len(returned)} inputs near the failing call where the "
                              "original's results differ: it fits the checks, not the function")
        # A lookup table of the tests' inputs with a default: the same value on all but the one or two inputs that
        # are the tests' own, where the original's results differed from each other.
        common, times = outputs.most_common(1)[0] if outputs else ("", 0)
        if len(returned) >= 8 and len({_value(before) for before, _ in returned}) >= 4 and \
                times >= len(returned) - max(1, len(returned) // 8) and common.startswith("returned "):
            raise CheckFailed(f"returns the same for {times} of the {len(returned)} inputs near the failing call "
                              "where the original's results differ: it fits the checks, not the function")
        raising = sum(after.startswith("raised ") or after == "timeout" for _, after in returned)
        if len(returned) >= 4 and 2 * raising > len(returned):
            raise CheckFailed(f"raises on {raising} of the {len(returned)} inputs near the failing call where the "
                              "original returned: it fits the checks, not the function")

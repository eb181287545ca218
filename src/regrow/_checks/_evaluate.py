"""Evaluation: one candidate compiled, installed for the duration and run under the checks.

This is the job a sandbox runs (see :mod:`regrow._proof._prove` for what the host does with its verdict).
While it runs, the thread is marked as evaluating, so a failure of candidate code starts no repair.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import traceback
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._redact import redact_text
from .._sandbox import SandboxTimeout
from ._oracles import Check, CheckFailed, passes_unrun
from ._test_limits import TestOverrun, limited
from ._transcript import MAX_TRANSCRIPT, Recorder

if typing.TYPE_CHECKING:
    from .._target._target import Target

_local = threading.local()


def in_evaluation() -> bool:
    """Whether this thread is running a candidate (a failure here must not start a new repair)."""
    return bool(getattr(_local, "active", False))


@contextlib.contextmanager
def evaluating() -> Iterator[None]:
    """Mark this thread as running candidate or probe code: failures in it start no repair."""
    previous = in_evaluation()
    _local.active = True
    try:
        yield
    finally:
        _local.active = previous


def evaluate(target: Target, source: str, checks: Sequence[Check],
             compiled: types.FunctionType | None = None) -> dict[str, Any]:
    """Compile ``source`` for ``target`` (unless ``compiled`` is what ``target.compile(source)`` gave)
    and run ``checks`` on it; a verdict as plain data.

    This is the job a sandbox runs. The candidate is installed into the live function for the
    duration (recursive calls and tests that import it by name run the candidate) and put back after.
    """
    started = time.perf_counter()

    def verdict(ok: bool, check: str, reason: str = "", passed: Sequence[str] = ()) -> dict[str, Any]:
        return {"ok": ok, "check": check, "reason": reason, "passed": list(passed),
                "duration": time.perf_counter() - started}

    try:
        fn = compiled if compiled is not None else target.compile(source)
    except SyntaxError as exc:
        return verdict(False, "compile", f"SyntaxError: {exc.msg} (line {exc.lineno})")
    except Exception as exc:
        return verdict(False, "compile", f"{type(exc).__name__}: {exc}")
    live = target.func
    saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
    # The live function runs the candidate while it is judged; callers reach it the way they do (through
    # the decorator heal stands above, if any). Where the code could not be swapped, the candidate itself.
    swapped = target.install(fn, lasting=False) == "code"
    clear_caches(target)
    subject: Callable[..., Any] = (target.entry or live) if swapped else fn
    passed: list[str] = []
    transcript: list[list[Any]] = []
    try:
        with evaluating():
            for check in checks:
                if passes_unrun(check.name):  # the original passed it without reaching what the candidate changed
                    passed.append(check.name)
                    continue
                recorder = Recorder(subject) if check.replayable else None
                if recorder is not None:
                    transcript.append([check.name, recorder.calls])
                try:
                    limited(check.name, functools.partial(check, recorder or subject))  # its own limit, if any
                except SandboxTimeout:
                    raise
                except (CheckFailed, TestOverrun) as exc:
                    return verdict(False, check.name, str(exc), passed)
                except BaseException as exc:  # the candidate raised: SystemExit and KeyboardInterrupt included
                    return verdict(False, check.name, reason_of(exc), passed)
                passed.append(check.name)
    finally:
        live.__code__, live.__defaults__, live.__kwdefaults__ = saved
    done = verdict(True, "all", "", passed)
    done["transcript"] = transcript if len(repr(transcript)) <= MAX_TRANSCRIPT else None
    return done


def clear_caches(target: Target) -> None:
    """Empty the ``functools`` caches of the target's module (and the one heal stands above, if any):
    results the old code computed — of the target, or of cached functions that call it — must not answer
    for a candidate."""
    holders = [target.entry, *target.func.__globals__.values()]
    if target.owner is not None:
        holders += list(vars(target.owner).values())
    for holder in holders:
        layer = holder
        for _ in range(8):  # and the decorators it wraps (an lru_cache under a functools.wraps decorator)
            clear = getattr(layer, "cache_clear", None) if hasattr(layer, "cache_info") else None
            if callable(clear):
                with contextlib.suppress(Exception):
                    clear()
            layer = getattr(layer, "__wrapped__", None) if callable(layer) else None
            if layer is None:
                break


def reason_of(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f for f in reversed(frames) if f.filename.startswith("<regrow ")), None)
    at = f" at `{where.line}`" if where is not None and where.line else ""
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable>"
    return redact_text(f"raised {type(exc).__name__}: {message}{at}")

"""Evidence from the checks run on the original: what each failing check saw, and where.

Before its first call a model proposer runs every check (each collected test on its own) once on
the original function, in a forked worker under line coverage, as the engine's fault localization
does — whichever front-end started the repair, so the bench and the CLI, whose failure is one line
of text, get the same evidence as the decorator. For each failing check it keeps pytest's
assertion explanation (actual and expected values), the traceback of your frames with their source
lines, the last call of the function with its arguments and what it returned or raised, and, for
a check that did not finish, how often each line ran and the function's locals when it was
stopped. Passing checks give the coverage that scores each line's suspicion (Ochiai). Reprs are
redacted in the worker, and every text again here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import os
import re
import textwrap
import time
import traceback
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._checks._evaluate import evaluating
from ..._checks._oracles import Check, CheckFailed, SingleTest
from ..._checks._render import ADDRESS
from ..._checks._spectrum import Run, Spectrum, Tracer, code_objects, split_checks
from ..._evidence._failure import bind_arguments, safe_repr
from ..._frames import OWN
from ..._redact import MASK, is_secret_name, mask_values, redact_text
from ..._sandbox._warm import Worker
from ..._sandbox._warm_child import Overrun, time_limit
from ..._target._target import Target
from .._proposer import Request

log = logging.getLogger("regrow")

COUNT = 100_000  # hits counted per line (3.12+ stops counting a line there: each hit costs a callback)
_GRACE = 0.5
_TEXT = 3000  # characters of one text field
_HIDDEN = (*OWN, f"{os.sep}_pytest{os.sep}", f"{os.sep}pluggy{os.sep}")
_LONG_RUN = re.compile(r"[\w.-]{201,}")
_CARETS = re.compile(r"^\s*[\^~]+\s*$")  # 3.11's markers under a frame's line: tokens spent on nothing
_FUNCTION_REPR = re.compile(r"<(?:function|bound method) ([\w.<>]+?)(?: of .*?)? at 0x[0-9a-fA-F]+>")


@dataclasses.dataclass(frozen=True)
class Seen:
    """What one check saw when it ran on the original."""

    check: str
    passed: bool
    lines: frozenset[int] = frozenset()  # file lines of the function that ran
    duration: float = 0.0
    timed_out: bool = False
    failing_line: int | None = None  # file line in the function where it raised
    reason: str = ""
    explanation: str = ""  # the failure's whole text: pytest's assertion explanation, the exception
    traceback: str = ""  # your frames, with their source lines
    call: str = ""  # the last call of the function: "name(a=1, b=2)"
    outcome: str = ""  # what that call did: "returned 3", "raised ValueError: …"
    hits: Mapping[int, int] = dataclasses.field(default_factory=dict)  # file line → times it ran
    stopped_line: int | None = None  # where a check that did not finish was stopped
    stopped: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the function's locals then

    def to_plain(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.update(lines=sorted(self.lines), hits=[[k, v] for k, v in sorted(self.hits.items())],
                    stopped=[[k, v] for k, v in self.stopped.items()])
        return data

    @classmethod
    def from_plain(cls, data: Any) -> Seen:
        """From plain data sent by a worker; ``ValueError`` unless every field has its type."""
        if type(data) is not dict or set(data) != _FIELDS:
            raise ValueError("evidence must be an object with the fields " + ", ".join(sorted(_FIELDS)))
        texts = {name: _text(data[name]) for name in _TEXTS}
        if type(data["passed"]) is not bool or type(data["timed_out"]) is not bool:
            raise ValueError("passed and timed_out must be booleans")
        if type(data["duration"]) not in (int, float):
            raise ValueError("duration must be a number")
        lines, hits, stopped = data["lines"], data["hits"], data["stopped"]
        if type(lines) is not list or not all(type(line) is int for line in lines):
            raise ValueError("lines must be a list of int")
        pairs = [*hits, *stopped] if type(hits) is list and type(stopped) is list else None
        if pairs is None or not all(type(p) is list and len(p) == 2 for p in pairs):
            raise ValueError("hits and stopped must be lists of pairs")
        if not all(type(k) is int and type(v) is int for k, v in hits):
            raise ValueError("hits must pair a line with a count")
        if not all(type(k) is str and type(v) is str for k, v in stopped):
            raise ValueError("stopped must pair a name with a repr")
        return cls(passed=data["passed"], lines=frozenset(lines), duration=float(data["duration"]),
                   timed_out=data["timed_out"], failing_line=_line(data["failing_line"]),
                   hits={k: v for k, v in hits}, stopped_line=_line(data["stopped_line"]),
                   stopped={k[:80]: MASK if is_secret_name(k) else again(v, 200) for k, v in stopped[:12]},
                   **texts)


_FIELDS = frozenset(field.name for field in dataclasses.fields(Seen))
_TEXTS = ("check", "reason", "explanation", "traceback", "call", "outcome")


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError("a text field must be a string")
    return again(value)


def redacted(text: str, limit: int = _TEXT) -> str:
    """``text`` bounded, then redacted by shape and by name; masks already in it stay as they are
    (``redact_text`` alone makes ``key="[REDACTED]"`` of ``key="sk-…"`` and leaves a bracket behind)."""
    masked = mask_shapes(bounded(text, limit)).replace(MASK, "\x00")
    return redact_text(masked).replace("\x00", MASK)


again = redacted  # what a worker sent, redacted once more


def mask_shapes(text: str) -> str:
    """Credentials by shape (``sk-…``, ``AKIA…``, private keys, the user's patterns), whatever they are called."""
    return mask_values(text)


def bounded(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters *before* it is redacted: the cut drops the whole token
    it falls in (no partial secret survives it), and runs of more than 200 word characters are
    shortened (redaction's patterns take quadratic time on them)."""
    if len(text) > limit:
        text = re.sub(r"\S*\Z", "", text[:limit]) + " ..."
    return _LONG_RUN.sub(lambda m: m.group()[:200] + "...", text)


def _line(value: Any) -> int | None:
    if value is not None and type(value) is not int:
        raise ValueError("a line must be an int or null")
    return value


@dataclasses.dataclass(frozen=True)
class Evidence:
    """Every check's run on the original, the sources of the failing tests, and the time limit used."""

    runs: tuple[Seen, ...]
    limit: float
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)  # failing check → its test's source

    @property
    def failing(self) -> list[Seen]:
        return [run for run in self.runs if not run.passed]

    @property
    def passing(self) -> list[Seen]:
        return [run for run in self.runs if run.passed]

    def spectrum(self) -> Spectrum:
        return Spectrum([Run(s.check, s.passed, s.lines, s.duration, [], s.timed_out, s.failing_line, s.reason)
                         for s in self.runs])


def gather(request: Request, timeout: float = 1.0, share: float = 0.25) -> Evidence | None:
    """Run each check of ``request`` on the original in a worker; ``None`` when there is nothing to run.

    It takes at most ``timeout`` seconds a check and ``share`` of the time left in the session.
    Evidence is a help, never a condition: anything that goes wrong here is logged and ends it.
    """
    try:
        fine = split_checks(request.checks)
    except Exception as exc:
        log.info("no evidence from the checks: %s", exc)
        return None
    if not fine:
        return None
    started = time.monotonic()
    end = started + max(request.deadline - started, 0.0) * share
    runs: list[Seen] = []
    try:
        with Worker({"observe": observe_job(request.target, fine, timeout)}, trusted={"observe"},
                    views=request.views, environ=request.environ) as worker:
            for index, check in enumerate(fine):
                if time.monotonic() >= end:
                    break
                status, value = worker.call("observe", index, timeout=timeout + _GRACE, read=Seen.from_plain)
                if status == "ok" and isinstance(value, Seen):
                    if value.lines or value.passed:  # a failing check that never ran the function says nothing
                        runs.append(value)
                else:  # killed: its coverage is lost, but it failed
                    why = f"did not finish in {timeout:g}s" if status == "timeout" else f"{status}: {value}"
                    runs.append(Seen(check.name, False, timed_out=status == "timeout", reason=why))
    except Exception as exc:
        log.info("evidence from the checks ended early: %s", exc, exc_info=True)
    if not runs:
        return None
    sources = {run.check: text for run in runs if not run.passed
               for check in fine if check.name == run.check and (text := test_source(check))}
    return Evidence(tuple(runs), timeout, sources)


def test_source(check: Check) -> str:
    """The source of the test a check runs (a test callable, one collected pytest test), or ``""``."""
    test = getattr(check, "test", None)
    if isinstance(check, SingleTest):
        item = check.suite.items.get(check.name)
        test = getattr(item, "obj", None)
    if not callable(test):
        return ""
    try:
        return textwrap.dedent(inspect.getsource(inspect.unwrap(test)))
    except (OSError, TypeError):
        return ""


def observe_job(target: Target, checks: Sequence[Check], limit: float) -> Callable[[int], dict[str, Any]]:
    """The ``"observe"`` job for a worker: :func:`observe` of the check at an index, as plain data.

    It runs only the original under the user's own checks and needs ``sys.settrace``: give the
    worker ``trusted={"observe"}``.
    """
    return lambda index: observe(target, checks[index], limit).to_plain()


def observe(target: Target, check: Check, limit: float) -> Seen:
    """Run ``check`` on the original for ``limit`` seconds, under coverage, and keep what it saw."""
    live = target.func
    saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
    tracer = Tracer(target.original_code, count=COUNT)
    calls: list[tuple[str, str]] = []
    error: BaseException | None = None
    result = None
    started = time.perf_counter()
    try:
        with evaluating(), time_limit(limit), tracer.tracing():
            if isinstance(check, SingleTest):  # for pytest's whole explanation, not just its first line
                result = check.suite.run(check.name, detail=True)
            else:
                check(_recording(live, calls))
    except BaseException as exc:  # Overrun and SandboxTimeout included
        error = exc
    finally:
        live.__code__, live.__defaults__, live.__kwdefaults__ = saved
    duration = time.perf_counter() - started
    explanation = ""
    if result is not None and not result.passed:
        error, explanation = result.error, redacted(result.detail or result.reason)
    passed = error is None and (result is None or result.passed)
    timed_out = isinstance(error, Overrun) or (not passed and duration >= limit)
    if passed:
        return Seen(check.name, True, frozenset(tracer.lines), duration, hits=dict(tracer.hits))
    frame, line = _own_frame(target, error)
    call, outcome = calls[-1] if calls else (_last_call(target, tracer), "")
    call, outcome = without_addresses(call), without_addresses(outcome)
    reason = f"did not finish in {limit:g}s" if timed_out else _reason(error, result)
    return Seen(check.name, False, frozenset(tracer.lines), duration, timed_out,
                failing_line=None if timed_out else line, reason=without_addresses(reason),
                explanation="" if timed_out else _clean(explanation or _explain(error)),
                traceback=_user_traceback(error), call=call, outcome=outcome, hits=dict(tracer.hits),
                stopped_line=line if timed_out else None,
                stopped=_locals(frame) if timed_out and frame is not None else {})


def _recording(live: types.FunctionType, calls: list[tuple[str, str]]) -> Callable[..., Any]:
    """``live``, keeping each call's arguments and what it returned or raised (for checks that take ``fn``)."""

    @functools.wraps(live)
    def recorder(*args: Any, **kwargs: Any) -> Any:
        shown = call_text(live, args, kwargs)
        try:
            value = live(*args, **kwargs)
        except BaseException as exc:
            stopped = isinstance(exc, Overrun)
            calls.append((shown, "did not return (stopped)" if stopped else f"raised {_exception(exc)}"))
            raise
        plain = not (inspect.isawaitable(value) or inspect.isgenerator(value) or inspect.isasyncgen(value))
        calls.append((shown, f"returned {redacted(safe_repr(value))}" if plain else ""))
        return value

    return recorder


def call_text(func: types.FunctionType, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    """``name(a=1, b='x')`` with each argument's repr bounded and redacted."""
    bound = bind_arguments(func, args, dict(kwargs))
    shown = ", ".join(f"{name}={MASK if is_secret_name(name) else redacted(safe_repr(value), 200)}"
                      for name, value in bound.items())
    return f"{func.__name__}({shown})"


def _last_call(target: Target, tracer: Tracer) -> str:
    """The last outermost call the tracer recorded (pytest tests call the function by name)."""
    if not tracer.calls:
        return ""
    call = tracer.calls[-1]
    return call_text(target.func, call.args, call.kwargs)


def _own_frame(target: Target, error: BaseException | None) -> tuple[types.FrameType | None, int | None]:
    """The deepest frame of the original in the error's traceback, and its line."""
    found: tuple[types.FrameType | None, int | None] = (None, None)
    tb = error.__traceback__ if error is not None else None
    if isinstance(error, CheckFailed) and error.__cause__ is not None:
        tb = error.__cause__.__traceback__
    codes = code_objects(target.original_code)
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _locals(frame: types.FrameType) -> dict[str, str]:
    return {name: MASK if is_secret_name(name) else redacted(safe_repr(value), 200)
            for name, value in list(frame.f_locals.items())[:12] if not name.startswith("__")}


def _exception(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable>"
    return redacted(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, 400)


def _reason(error: BaseException | None, result: Any) -> str:
    if result is not None:
        return redacted(str(result.reason))
    if isinstance(error, CheckFailed):
        return redacted(str(error))
    return f"raised {_exception(error)}" if error is not None else "failed"


def _explain(error: BaseException | None) -> str:
    """The failure's whole text: an assertion's explanation (pytest's rewriting adds the values)."""
    if error is None:
        return ""
    cause = error.__cause__ if isinstance(error, CheckFailed) and error.__cause__ is not None else error
    text = redacted(str(error)) if isinstance(error, CheckFailed) else ""
    if isinstance(cause, AssertionError):
        message = redacted(str(cause).strip())
        return message if message and message not in text else text or message or "assertion failed"
    return text or redacted("".join(traceback.format_exception_only(type(cause), cause)).strip())


def _clean(text: str) -> str:
    """``<function f at 0x7f…>`` as ``f``: addresses say nothing to a model and change every run."""
    return without_addresses(redacted(text))


def without_addresses(text: str) -> str:
    """``<function f at 0x7f…>`` as ``f`` and ``<mod.Timer object at 0x7f…>`` as ``<mod.Timer object>``."""
    return ADDRESS.sub("", _FUNCTION_REPR.sub(r"\1", text))


def _user_traceback(error: BaseException | None) -> str:
    """The traceback's frames outside regrow and pytest, with their source lines."""
    if error is None or isinstance(error, Overrun):
        return ""
    cause = error.__cause__ if isinstance(error, CheckFailed) and error.__cause__ is not None else error
    frames = [f for f in traceback.extract_tb(cause.__traceback__) if not any(h in f.filename for h in _HIDDEN)]
    if not frames:
        return ""
    text = "".join([*traceback.StackSummary.from_list(frames[-8:]).format(),
                    *traceback.format_exception_only(type(cause), cause)])
    return _clean("\n".join(line for line in text.split("\n") if not _CARETS.match(line)))

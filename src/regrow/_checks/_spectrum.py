"""Fault localization: which lines of the target the failing checks run and the passing ones do not.

Each check (each collected test, for a pytest check) runs on the original function with line
coverage limited to the target's own code objects — ``sys.monitoring`` on 3.12+, a ``sys.settrace``
hook that traces only those code objects before. Lines are scored with Ochiai over failing vs
passing checks; ties, and functions no check reaches, fall back to distance from the failing line.
The same runs record the calls the checks made (the inputs the overfitting guard varies) and how
long the original takes on passing checks (the basis of the per-candidate time limit).

A run crosses from the worker to the host as plain data (:meth:`Run.to_plain`,
:meth:`Run.from_plain`), its recorded calls sealed (see :mod:`._inputs`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .._sandbox._warm import Worker
from .._sandbox._warm_child import Overrun, time_limit
from .._target._target import Target
from ._evaluate import clear_caches, evaluating
from ._inputs import Call, SealedCall, arguments_of, seal_all
from ._oracles import Check, CheckFailed

_MAX_CALLS = 64  # recorded calls per check: enough inputs to vary, bounded memory
_GRACE = 0.5  # seconds past a check's own limit before the worker is killed
_HOT_HITS = 64  # runs of a line that make it part of the loop a check that did not finish was caught in
_HOT_BONUS = 0.25  # added to such a line's suspicion (Ochiai is at most 1)
TEST_FLOOR = 1.0  # seconds: the least time limit of a check while candidates are screened (load stalls tests) ...
TEST_FACTOR = 5.0  # ... else this multiple of its time on the original (see Spectrum.test_limits)
TEST_CPU_FLOOR = 0.03  # CPU seconds: the least CPU limit of a check (load stalls the wall clock, hardly CPU time)
FAILING_CPU_FLOOR = 0.1  # ... of a failing one, which once fixed may go on well past the assert it failed at


@dataclasses.dataclass
class Run:
    """One check on the original function."""

    check: str
    passed: bool
    lines: frozenset[int]  # file lines of the target that ran
    duration: float
    calls: list[SealedCall]
    timed_out: bool = False
    failing_line: int | None = None  # file line in the target where it raised, if it did
    reason: str = ""  # why it failed
    hot: frozenset[int] = frozenset()  # of a run that did not finish: the lines it kept running (its loop)
    cpu: float = 0.0  # CPU seconds the check took (this process's, see time.process_time)

    def to_plain(self) -> dict[str, Any]:
        """This run as plain data, to cross from a worker to the host."""
        return {"check": self.check, "passed": self.passed, "lines": sorted(self.lines), "duration": self.duration,
                "calls": [call.to_plain() for call in self.calls], "timed_out": self.timed_out,
                "failing_line": self.failing_line, "reason": self.reason, "hot": sorted(self.hot), "cpu": self.cpu}

    @classmethod
    def from_plain(cls, data: Any) -> Run:
        """A run from untrusted plain data; ``ValueError`` unless every field has the right type."""
        if type(data) is not dict or set(data) != _RUN_FIELDS:
            raise ValueError("a run must be an object with the fields " + ", ".join(sorted(_RUN_FIELDS)))
        lines, calls, duration, line = data["lines"], data["calls"], data["duration"], data["failing_line"]
        for name in ("lines", "hot"):
            if type(data[name]) is not list or not all(type(item) is int for item in data[name]):
                raise ValueError(f"a run's {name} must be a list of int")
        if type(calls) is not list:
            raise ValueError("a run's calls must be a list")
        if not {type(duration), type(data["cpu"])} <= {int, float} or not (line is None or type(line) is int):
            raise ValueError("a run's duration and cpu must be numbers and its failing line an int or null")
        if type(data["check"]) is not str or type(data["reason"]) is not str:
            raise ValueError("a run's check and reason must be strings")
        if type(data["passed"]) is not bool or type(data["timed_out"]) is not bool:
            raise ValueError("a run's passed and timed_out must be booleans")
        return cls(data["check"], data["passed"], frozenset(lines), float(duration),
                   [SealedCall.from_plain(call) for call in calls], data["timed_out"], line, data["reason"],
                   frozenset(data["hot"]), float(data["cpu"]))


_RUN_FIELDS = frozenset({"check", "passed", "lines", "duration", "calls", "timed_out", "failing_line", "reason",
                         "hot", "cpu"})


@dataclasses.dataclass
class Spectrum:
    """Every check's run on the original, and what follows from them."""

    runs: list[Run]

    @property
    def failing(self) -> list[Run]:
        return [run for run in self.runs if not run.passed]

    @property
    def passing(self) -> list[Run]:
        return [run for run in self.runs if run.passed]

    def ochiai(self) -> dict[int, float]:
        """Each covered file line's Ochiai score: failed(l) / sqrt(total failed * (failed(l) + passed(l)))."""
        failed_total = len(self.failing)
        scores: dict[int, float] = {}
        lines = sorted({line for run in self.runs for line in run.lines})
        for line in lines:
            failed = sum(line in run.lines for run in self.failing)
            passed = sum(line in run.lines for run in self.passing)
            scores[line] = failed / math.sqrt(failed_total * (failed + passed)) if failed else 0.0
        return scores

    def failing_line(self) -> int | None:
        return next((run.failing_line for run in self.failing if run.failing_line), None)

    def calls(self, passing_only: bool = False) -> list[SealedCall]:
        """Distinct recorded calls, in order (from passing checks only, if asked)."""
        runs = self.passing if passing_only else self.runs
        seen: dict[str, SealedCall] = {}
        for run in runs:
            for call in run.calls:
                seen.setdefault(call.key, call)
        return list(seen.values())

    def passing_time(self) -> float:
        return sum(run.duration for run in self.passing)

    def test_limits(self, ceiling: float, floor: float = TEST_FLOOR, factor: float = TEST_FACTOR,
                    cpu: bool = False, failing_floor: float | None = None) -> dict[str, float]:
        """Each check's own time limit while candidates are screened, at most ``ceiling`` (the candidate's):
        ``factor`` times its time on the original, at least ``floor``, for a check that passed. One that
        failed or did not finish tells little of how long it takes once fixed: the longest limit of the passing
        ones that ran the target (those that never did say nothing of it) and its own time's multiple, if
        longer, at least ``failing_floor`` (default ``floor``); the ceiling when no check passed. With
        ``cpu``, the same from CPU times (floors too), for one that did not finish where some passed as well."""
        spent: Callable[[Run], float] = (lambda run: run.cpu) if cpu else (lambda run: run.duration)
        own = {run.check: min(ceiling, max(floor, factor * spent(run))) for run in self.passing}
        others = max((own[run.check] for run in self.passing if run.lines), default=0.0 if self.passing else ceiling)
        for run in (run for run in self.failing if not (cpu and run.timed_out and not self.passing)):
            mine = 0.0 if run.timed_out else factor * spent(run)
            own[run.check] = min(ceiling, max(floor if failing_floor is None else failing_floor, others, mine))
        return own


def suspicion(spectrum: Spectrum | None, failing_line: int | None) -> Callable[[int], float]:
    """A score per file line, higher first: Ochiai, then nearness to the failing line as a tie-break."""
    scores = spectrum.ochiai() if spectrum is not None else {}
    # The lines a check that did not finish kept running: its loop, where an edit can end it.
    hot = {line for run in spectrum.runs if run.timed_out for line in run.hot} if spectrum is not None else set()

    def score(line: int) -> float:
        near = 1.0 / (1 + abs(line - failing_line)) if failing_line is not None else 0.0
        return scores.get(line, 0.0) + _HOT_BONUS * (line in hot) + 1e-3 * near

    return score


def code_objects(code: types.CodeType) -> set[types.CodeType]:
    """The function's code and every code object nested in it (comprehensions, lambdas, inner functions)."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= code_objects(const)
    return found


def split_checks(checks: Sequence[Check]) -> list[Check]:
    """Checks at the finest grain they offer (one per test for a pytest check), cheapest first."""
    fine: list[Check] = []
    for check in sorted(checks, key=lambda c: c.cost):
        fine.extend(check.split())
    return fine


def record(checks: Sequence[Check], worker: Worker, timeout: float = 1.0, deadline: float | None = None) -> Spectrum:
    """Run each check (by its index) on the original under coverage, in the worker's ``"trace"`` job (see
    :func:`trace_job`); a time limit on each, and overall."""
    runs = []
    for index, check in enumerate(checks):
        if (left := timeout if deadline is None else min(timeout, deadline - time.monotonic())) <= 0:
            break
        status, value = worker.call("trace", index, timeout=left + _GRACE, read=Run.from_plain)
        if status == "ok" and isinstance(value, Run):
            runs.append(value)
        else:  # killed: coverage lost, but it still counts as a failing check
            reason = f"{check.name} did not finish in {left:.3g}s" if status == "timeout" else str(value)
            runs.append(Run(check.name, False, frozenset(), left, [], timed_out=True, reason=reason))
    return Spectrum(runs)


def trace_job(target: Target, checks: Sequence[Check], limit: float) -> Callable[[int], dict[str, Any]]:
    """The ``"trace"`` job for a worker: :func:`trace` of the check at an index, as plain data.

    It runs only the original and the user's own checks: give the worker ``trusted={"trace"}`` (a
    child of its own, without the filter and the audit hook).
    """
    return lambda index: trace(target, checks[index], limit).to_plain()


def trace(target: Target, check: Check, limit: float) -> Run:
    """Run ``check`` on the original function under coverage, for ``limit`` seconds."""
    live = target.func
    saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
    tracer = _Tracer(target.original_code, count=_HOT_HITS)
    failure: BaseException | None = None
    timed_out = False
    started, cpu = time.perf_counter(), time.process_time()
    try:
        clear_caches(target)  # a cache the original filled before the fork would answer for it: no lines, no calls
        with evaluating(), time_limit(limit), tracer.tracing():  # evaluating(): a failing check starts no repair
            check(live)
    except Overrun:
        timed_out = True
    except BaseException as exc:  # SandboxTimeout included: the in-process fallback's limit
        failure = exc
    finally:
        live.__code__, live.__defaults__, live.__kwdefaults__ = saved
    duration, cpu = time.perf_counter() - started, time.process_time() - cpu
    # A check that catches every exception (as a test run directly does) makes the overrun its failure: not finished.
    timed_out = timed_out or (failure is not None and duration >= limit)
    reason = f"{check.name} did not finish in {limit:g}s" if timed_out else _reason(failure)
    failing_line = _line_in(target, failure) if failure is not None else None
    hot = frozenset(line for line, hits in tracer.hits.items() if hits >= _HOT_HITS) if timed_out else frozenset()
    return Run(check.name, failure is None and not timed_out, frozenset(tracer.lines), duration,
               seal_all(tracer.calls), timed_out, failing_line, reason, hot, cpu)


def _reason(failure: BaseException | None) -> str:
    if failure is None:
        return ""
    if isinstance(failure, CheckFailed):
        return str(failure)
    return f"raised {type(failure).__name__}: {failure}"


def _line_in(target: Target, exc: BaseException) -> int | None:
    location = getattr(exc, "location", None)
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(exc.__traceback__)]
    filename = target.original_code.co_filename
    for name, line in [*reversed(frames), *([location] if location else [])]:
        if name == filename and line is not None and target.def_lineno <= line <= _last_line(target):
            return int(line)
    return None


def _last_line(target: Target) -> int:
    return target.lineno + len(target.source.splitlines()) - 1


class _Tracer:
    """Line coverage and call arguments for one function's code objects, nothing else.

    With ``count``, each line's hits are counted too, up to ``count`` (how often a loop ran: the
    evidence a model proposer shows for a check that did not finish); the engine does not count.
    """

    def __init__(self, code: types.CodeType, count: int = 0) -> None:
        self.main = code
        self.codes = code_objects(code)
        self.lines: set[int] = set()
        self.calls: list[Call] = []
        self.count = count
        self.hits: collections.Counter[int] = collections.Counter()
        # Frames of the function already on the stack when tracing began: the failing call an instrumented
        # @heal is still handling (a worker forked then inherits it). A call under one is not a recursion.
        self.outer: frozenset[int] = frozenset()

    def entered(self, frame: types.FrameType) -> None:
        """Record the arguments of an outermost call (recursive calls add nothing new)."""
        if frame.f_code is not self.main or len(self.calls) >= _MAX_CALLS:
            return
        caller = frame.f_back
        while caller is not None:
            if caller.f_code is self.main and id(caller) not in self.outer:
                return
            caller = caller.f_back
        with contextlib.suppress(Exception):  # an argument that cannot be copied: keep the coverage anyway
            self.calls.append(arguments_of(self.main, dict(frame.f_locals)))

    @contextlib.contextmanager
    def tracing(self) -> Iterator[None]:
        frame: types.FrameType | None = sys._getframe()
        outer = set()
        while frame is not None:
            if frame.f_code is self.main:
                outer.add(id(frame))
            frame = frame.f_back
        self.outer = frozenset(outer)
        if sys.version_info >= (3, 12):
            with _monitoring(self):
                yield
        else:
            with _settrace(self):
                yield


Tracer = _Tracer  # for evidence beyond the engine's own (see regrow._proposers._llm._evidence)


@contextlib.contextmanager
def _settrace(tracer: _Tracer) -> Iterator[None]:
    lines, codes, hits, counting = tracer.lines, tracer.codes, tracer.hits, tracer.count > 0

    def local(frame: types.FrameType, event: str, arg: object) -> Any:
        if event == "line":
            lines.add(frame.f_lineno)
            if counting:
                hits[frame.f_lineno] += 1
        return local

    def global_(frame: types.FrameType, event: str, arg: object) -> Any:
        if frame.f_code not in codes:
            return None  # not ours: no line events for it
        tracer.entered(frame)
        lines.add(frame.f_lineno)
        return local

    previous = sys.gettrace()
    try:
        with _nesting(global_):
            yield
    finally:
        sys.settrace(previous)


@contextlib.contextmanager
def _nesting(ours: Any) -> Iterator[None]:
    """Trace with ``ours``, and let a check that calls ``sys.settrace`` itself (a test that counts the
    lines it runs) trace beside it: its tracer is nested with ours, not put in ours' place, and
    ``sys.gettrace()`` shows it its own."""
    real_settrace, real_gettrace = sys.settrace, sys.gettrace
    theirs: list[Any] = [None]

    def both(frame: types.FrameType, event: str, arg: object) -> Any:
        return _chain(ours(frame, event, arg), theirs[0](frame, event, arg) if theirs[0] is not None else None)

    def settrace(function: Any) -> None:
        theirs[0] = None if function is ours else function
        real_settrace(ours if theirs[0] is None else both)

    def gettrace() -> Any:
        return theirs[0] if theirs[0] is not None else real_gettrace()

    real_settrace(ours)
    sys.settrace, sys.gettrace = settrace, gettrace
    try:
        yield
    finally:
        sys.settrace, sys.gettrace = real_settrace, real_gettrace


def _chain(first: Any, second: Any) -> Any:
    """One local trace function out of two (either may be ``None``: no local tracing from it)."""
    if first is None or second is None:
        return first if second is None else second

    def local(frame: types.FrameType, event: str, arg: object) -> Any:
        return _chain(first(frame, event, arg), second(frame, event, arg))

    return local


@contextlib.contextmanager
def _monitoring(tracer: _Tracer) -> Iterator[None]:  # pragma: no cover - Python 3.12+
    monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 - typed for 3.10, where it does not exist
    events = monitoring.events
    tool = next((t for t in range(1, 6) if monitoring.get_tool(t) is None), None)
    if tool is None:  # every tool id taken (a debugger and coverage at once): settle for settrace
        with _settrace(tracer):
            yield
        return
    monitoring.use_tool_id(tool, "regrow")

    def on_line(code: types.CodeType, line: int) -> Any:
        tracer.lines.add(line)
        if tracer.count:
            tracer.hits[line] += 1
            if tracer.hits[line] < tracer.count:
                return None
        return monitoring.DISABLE  # one hit per line is all coverage needs

    def on_start(code: types.CodeType, offset: int) -> Any:
        tracer.entered(sys._getframe(1))

    monitoring.register_callback(tool, events.LINE, on_line)
    monitoring.register_callback(tool, events.PY_START, on_start)
    for code in tracer.codes:
        monitoring.set_local_events(tool, code, events.LINE | events.PY_START)
    monitoring.restart_events()
    try:
        yield
    finally:
        for code in tracer.codes:
            monitoring.set_local_events(tool, code, 0)
        monitoring.register_callback(tool, events.LINE, None)
        monitoring.register_callback(tool, events.PY_START, None)
        monitoring.free_tool_id(tool)

"""The built-in engine: AST edits of the target, most suspicious code first, validated and ranked.

No network, no key, deterministic: the same function and checks give the same candidates in the
same order. The engine localizes the fault, walks its edits tier by tier (inside a tier by
suspicion, then by operator prior), and checks each candidate itself, in-process under a time
limit that adapts to the original's own runtime. After the first candidate that passes it looks a
little further for alternatives no larger, ranks them (see :mod:`._rank`) and yields them best
first, so the session's own proof confirms the best one.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import itertools
import time
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .._candidate import Candidate
from .._checks import Check, Verdict
from .._evaluate import evaluate
from .._events import Event, emit
from .._proposer import Request
from .._target import Target, find_function
from ._edits import EditSizes, Operator, Replacement
from ._inputs import vary_job
from ._judges import Judges, cores, failing_first
from ._localize import Spectrum, record, split_checks, suspicion, trace_job
from ._module import Module
from ._operators import OPERATORS
from ._pairs import Coupled, pairs
from ._rank import Evidence, behaviour_job, rank
from ._scope import Scope, Site
from ._splice import splice, splice_both
from ._worker import Overrun, Worker, time_limit

Suspicion = Callable[[int], float]
_GRACE = 0.5  # seconds past a candidate's own limit before its worker is killed
_TIMEOUT_WEIGHT = 25


@dataclasses.dataclass
class Stats:
    """What one ``propose`` call did, for reports and benchmarks."""

    edits: int = 0  # edits the operators proposed
    candidates: int = 0  # distinct candidates that compiled
    evaluated: int = 0  # candidates run against the checks
    plausible: int = 0  # candidates that passed every check
    first: int | None = None  # evaluations until the first plausible one
    localize_seconds: float = 0.0
    search_seconds: float = 0.0  # time spent building and checking candidates
    candidate_timeout: float = 0.0
    forks: int = 0  # workers started: one, plus one per candidate that had to be killed
    jobs: int = 1  # workers that judged candidates at once
    stopped: str = ""  # why the search ended (see Engine.stop_reason)

    @property
    def per_second(self) -> float:
        return self.evaluated / self.search_seconds if self.search_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "per_second": round(self.per_second, 1)}


@dataclasses.dataclass(order=True)
class _Edit:
    key: tuple[int, float, int, int, int]
    op: Operator = dataclasses.field(compare=False)
    site: Site = dataclasses.field(compare=False)
    new: Replacement = dataclasses.field(compare=False)


@dataclasses.dataclass
class Plan:
    """The ranked edits of one target, turned into candidates on demand."""

    target: Target
    source: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    edits: list[_Edit]
    spectrum: Spectrum | None
    stats: Stats
    keys: dict[str, tuple[object, ...]] = dataclasses.field(default_factory=dict)  # what each candidate compiles to

    @functools.cached_property
    def original_key(self) -> tuple[object, ...]:
        return _code_key(compile(self.source, "<regrow candidate>", "exec", dont_inherit=True))

    def candidates(self, max_size: Callable[[], int | None] = lambda: None, after: _Edit | None = None,
                   judged: Iterable[Candidate] = ()) -> Iterator[tuple[Candidate, _Edit]]:
        """Distinct compiling candidates in search order; edits larger than ``max_size()`` are skipped.

        ``after`` resumes the order after that edit, as if the candidates ``judged`` had come before.
        """
        seen = {self.original_key, *(self.keys[candidate.source] for candidate in judged)}
        start = 0 if after is None else next(i for i, edit in enumerate(self.edits) if edit is after) + 1
        sizes = EditSizes()
        for edit in self.edits[start:]:
            limit = max_size()
            if limit is not None and sizes(edit.site, edit.new) > limit:
                continue
            text = _materialise(self.source, self.function, edit, seen, self.keys)
            if text is None:
                continue
            self.stats.candidates += 1
            size = sizes(edit.site, edit.new)
            yield Candidate(text, origin="engine", operator=edit.op.name, edit_size=size, line=edit.site.line), edit

    def coupled(self) -> Iterator[tuple[Candidate, _Edit]]:
        """Distinct compiling candidates of two edits at separate sites (see :mod:`._pairs`)."""
        seen = {self.original_key}
        sizes = EditSizes()
        for first, second in pairs(self.edits):
            text = _compiled(splice_both(self.source, self.function, [(first.site, first.new),
                                                                     (second.site, second.new)]), seen, self.keys)
            if text is None:
                continue
            self.stats.candidates += 1
            both = Coupled(first.op, second.op)
            size = sizes(first.site, first.new) + sizes(second.site, second.new)
            yield (Candidate(text, origin="engine", operator=both.name, edit_size=size, line=first.site.line),
                   _Edit(first.key, both, first.site, first.new))


def _materialise(source: str, function: ast.FunctionDef | ast.AsyncFunctionDef, edit: _Edit,
                 seen: set[tuple[object, ...]], keys: dict[str, tuple[object, ...]]) -> str | None:
    """The edited source, or ``None`` when it does not compile or compiles to a candidate already seen."""
    try:
        text = splice(source, function, edit.site, edit.new)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return _compiled(text, seen, keys)


def _compiled(text: str | None, seen: set[tuple[object, ...]], keys: dict[str, tuple[object, ...]]) -> str | None:
    """``text`` unless it does not compile or compiles to a candidate already seen (``keys`` learns
    what it compiles to)."""
    if text is None:
        return None
    try:
        code = compile(text, "<regrow candidate>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):  # 'break' outside a loop and the like
        return None
    key = _code_key(code)
    if key in seen:
        return None
    seen.add(key)
    keys[text] = key
    return text


def _code_key(code: types.CodeType) -> tuple[object, ...]:
    """What a candidate compiles to, positions left out: equal keys behave alike, however the text differs
    (this also merges ``not a in b`` with ``a not in b``, which the compiler makes one)."""
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
            code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
            code.co_exceptiontable if hasattr(code, "co_exceptiontable") else b"")


class Engine:
    """The default proposer: search over single edits of the target.

    ``operators`` is the set of edit families (all of ``OPERATORS`` by default). With ``validate``
    the engine runs the request's checks on candidates itself — in a forked warm worker where the
    platform has ``fork`` (``fork=False`` keeps it in this process) — and yields only those that
    pass, ranked; without, it yields every candidate lazily in search order for the session to judge.
    """

    name = "engine"

    def __init__(
        self,
        operators: Sequence[Operator] | None = None,
        *,
        validate: bool = True,
        fork: bool | None = None,
        neighbourhood: int = 200,  # evaluations after the first plausible candidate (a timeout counts 25)
        time_floor: float = 0.2,  # per-candidate time limit: factor x the original's runtime, within these
        time_factor: float = 20.0,
        time_ceiling: float = 5.0,
        localize_timeout: float = 1.0,
        jobs: int | None = None,  # workers judging at once: the request's (the session's jobs=), else every core
        fresh: bool = False,  # judge each candidate in a fresh child (for tests that depend on their order)
    ) -> None:
        self.operators = list(operators if operators is not None else OPERATORS)
        self.validate, self.fork = validate, fork
        self.neighbourhood = neighbourhood
        self.time_floor, self.time_factor, self.time_ceiling = time_floor, time_factor, time_ceiling
        self.localize_timeout = localize_timeout
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs= is how many workers judge candidates at once: at least 1, not {jobs}")
        self.jobs = jobs
        self.fresh = fresh
        self.last_stats = Stats()

    @property
    def stop_reason(self) -> str:
        """Why the last search ended without more to offer: a budget (and which), or every candidate judged."""
        return self.last_stats.stopped

    def propose(self, request: Request) -> Iterator[Candidate]:
        if not self.validate or not request.checks:
            plan = self.plan(request)
            self.last_stats = plan.stats
            for candidate, _ in plan.candidates():
                yield candidate
            return
        jobs = self.jobs or request.jobs or cores()
        with self._worker(request) as worker, Judges(worker, jobs) as judges:
            plan = self.plan(request, worker)
            self.last_stats = plan.stats
            plan.stats.jobs = len(judges.workers)
            failing_first(request.checks, plan.spectrum)  # before the judging children fork
            found = self._search(plan, request, judges)
            ranked = rank(found, plan.spectrum, worker)
            plan.stats.forks = judges.forks
        # The worker is gone before the first yield: a session that stops early leaves no child behind.
        for number, evidence in enumerate(ranked, start=1):
            yield dataclasses.replace(evidence.candidate, note=evidence.note(number, len(ranked)))

    def _worker(self, request: Request) -> Worker:
        """A worker forked with the tests collected, ready to trace, judge and compare.

        Tracing runs only the original under the user's own checks; it needs ``sys.settrace``, which
        the worker's audit hook refuses, so it is the one trusted job (see :class:`Worker`).
        """
        target, checks = request.target, list(request.checks)
        fine = split_checks(checks)  # collects pytest suites now, so the child inherits them
        return Worker({
            "trace": trace_job(target, fine, self.localize_timeout),
            "judge": lambda source, limit: _judge(target, source, checks, limit),
            "vary": vary_job,
            "behaviour": behaviour_job(target),
        }, fork=self.fork, trusted={"trace"}, fresh=self.fresh)

    def plan(self, request: Request, worker: Worker | None = None) -> Plan:
        """Localize the fault (given a worker to run the checks in) and rank every edit of the target."""
        target, stats = request.target, Stats()
        started = time.monotonic()
        spectrum = None
        if worker is not None:
            budget = started + max(request.deadline - started, 0.0) / 4
            spectrum = record(split_checks(request.checks), worker, self.localize_timeout, deadline=budget)
        stats.localize_seconds = time.monotonic() - started
        source = target.bare_source
        function = find_function(source, target.name)
        failing = request.failure.lineno or (spectrum.failing_line() if spectrum else None)
        score = suspicion(spectrum, failing)
        offset = target.def_lineno - 1  # site lines count from the def line; coverage has file lines
        edits = []
        scope = Scope.of(function, Module.of(target))
        for site in scope.sites:
            weight = score(site.line + offset)
            for op in self.operators:
                for k, new in enumerate(op.edits(site, scope)):
                    edits.append(_Edit((op.tier, -weight, op.prior, site.order, k), op, site, new))
        edits.sort()
        stats.edits = len(edits)
        return Plan(target, source, function, edits, spectrum, stats)

    def localize(self, request: Request) -> Suspicion:
        """How suspicious each line of the definition is (line 1 is the ``def``), higher first."""
        with self._worker(request) as worker:
            spectrum = record(split_checks(request.checks), worker, self.localize_timeout)
        score = suspicion(spectrum, request.failure.lineno or spectrum.failing_line())
        offset = request.target.def_lineno - 1
        return lambda line: score(line + offset)

    def candidate_timeout(self, spectrum: Spectrum | None) -> float:
        """A multiple of the original's runtime on the checks that passed (those that finished, if none
        passed), within floor and ceiling: a failing check that hangs must not set the limit."""
        runs = (spectrum.passing or [run for run in spectrum.runs if not run.timed_out]) if spectrum else []
        finished = sorted(run.duration for run in runs)
        # The median run times the count: the first run in a fresh worker is slow, and must not set the limit.
        # Every check, the failing ones too, is expected to take about as long once it is fixed.
        spent = finished[len(finished) // 2] * len(spectrum.runs) if finished and spectrum else 0.0
        return min(self.time_ceiling, max(self.time_floor, self.time_factor * spent))

    def _search(self, plan: Plan, request: Request, judges: Judges) -> list[Evidence]:
        """Judge candidates in search order (several at once, read back in order) until a budget is spent,
        the neighbourhood of the first plausible one is explored, or there are no more."""
        stats = plan.stats
        stats.candidate_timeout = timeout = self.candidate_timeout(plan.spectrum)
        started = time.monotonic()
        reserve = min(2.0, max(0.0, request.deadline - started) / 10)  # left for ranking and the session's proof
        deadline = request.deadline - reserve
        budget = max(request.max_candidates - len(request.history), 0)
        found: list[Evidence] = []
        judged: list[Candidate] = []
        since_first = 0  # counted, not timed, so that the same inputs give the same neighbourhood

        def limit() -> int | None:
            return found[0].candidate.edit_size if found else None

        def search(after: _Edit | None = None) -> Iterator[tuple[Candidate, _Edit]]:
            return itertools.chain(plan.candidates(limit, after, judged), _unless(found, plan.coupled))

        verdicts = judges.verdicts(search(), lambda worker, item: judge(worker, plan.target, item[0].source, timeout))
        stats.stopped = ""
        try:
            for (candidate, edit), verdict in verdicts:
                if stats.evaluated >= budget:
                    stats.stopped = (f"candidate budget of {request.max_candidates} spent "
                                     "(raise max_candidates / --max-candidates)")
                    break
                if time.monotonic() >= deadline:
                    stats.stopped = f"time budget spent after {stats.evaluated} candidates (raise timeout / --timeout)"
                    break
                if since_first > self.neighbourhood:
                    stats.stopped = "neighbourhood of the first plausible candidate explored"
                    break
                stats.evaluated += 1
                judged.append(candidate)
                if request.events:  # the front-end shows every candidate the engine judged
                    emit(request.events, Event("verdict", plan.target.qualname, request.attempt, candidate,
                                               Verdict(verdict["ok"], verdict["check"], verdict["reason"])))
                if found:  # a mutant that hangs costs its whole time limit: it uses up more of the neighbourhood
                    since_first += _TIMEOUT_WEIGHT if verdict["check"] == "sandbox" else 1
                if not verdict["ok"]:
                    continue
                found.append(Evidence(candidate, edit.op.tier, stats.evaluated))
                if len(found) == 1:
                    stats.first = stats.evaluated
                    # What was handed out ahead was chosen without the size limit the first find sets:
                    # go on from here as one worker would have (after a pair, nothing: pairs end at a find).
                    verdicts.restart(() if isinstance(edit.op, Coupled) else search(edit))
        finally:
            verdicts.close()
        stats.plausible = len(found)
        stats.search_seconds = time.monotonic() - started
        if not stats.stopped:
            stats.stopped = (f"search space exhausted: all {stats.evaluated} candidates judged" if found else
                             f"search space exhausted: all {stats.evaluated} candidates failed")
        return found


def _unless(found: list[Evidence], then: Callable[[], Iterator[tuple[Candidate, _Edit]]],
            ) -> Iterator[tuple[Candidate, _Edit]]:
    """``then()``'s candidates while nothing is ``found``: a pair is searched only once every single edit
    failed, and the first pair that passes is the one (pairs come most likely first; among several, the
    one that changes the original least is rarely the one meant)."""
    for pair in then():
        if found:
            return
        yield pair


def judge(worker: Worker, target: Target, source: str, timeout: float) -> dict[str, Any]:
    """The verdict on ``source`` from the worker's ``"judge"`` job: ``{ok, check, reason}``.

    A call that ends without a verdict (timeout, crash, a refusal of the guard, a malformed reply)
    is a failed verdict of the check ``"sandbox"``, with the reason.
    """
    status, verdict = worker.call("judge", source, timeout, timeout=timeout + _GRACE, read=_read_verdict)
    if status == "ok":
        return verdict  # type: ignore[no-any-return]
    target.restore()  # an in-process evaluation cut short may not have put it back
    why = {"timeout": f"timeout after {timeout:.2g}s", "refused": str(verdict)}.get(status, f"{status}: {verdict}")
    return {"ok": False, "check": "sandbox", "reason": why}


def _read_verdict(data: Any) -> dict[str, Any]:
    """A ``"judge"`` reply from the worker, checked: ``ValueError`` unless it is a verdict."""
    if (type(data) is not dict or set(data) != {"ok", "check", "reason"} or type(data["ok"]) is not bool
            or type(data["check"]) is not str or type(data["reason"]) is not str):
        raise ValueError("not a verdict: expected {ok: bool, check: str, reason: str}")
    return data


def _judge(target: Target, source: str, checks: Sequence[Check], limit: float) -> dict[str, Any]:
    """The ``"judge"`` job: whether ``source`` passes every check within ``limit`` seconds, and why not."""
    started = time.monotonic()
    try:
        with time_limit(limit):
            verdict = evaluate(target, source, checks)
        if not verdict["ok"] and time.monotonic() - started >= limit:  # a check turned the overrun into a failure
            raise Overrun
        return {"ok": bool(verdict["ok"]), "check": str(verdict["check"]), "reason": str(verdict["reason"])}
    except Overrun:
        return {"ok": False, "check": "sandbox", "reason": f"timed out after {limit:.2g}s"}
    finally:
        target.restore()  # the limit may have struck while evaluate was putting the original back

"""The built-in engine: AST edits of the target, most suspicious code first, validated and ranked.

No network, no key, deterministic: the same function and checks give the same candidates in the
same order. The engine localizes the fault, walks its edits tier by tier (inside a tier by
suspicion, then by operator prior), and checks each candidate itself, in-process under a time
limit that adapts to the original's own runtime. After the first candidate that passes it looks a
little further for alternatives no larger, ranks them (see :mod:`._rank`) and yields them best
first, so the session's own proof confirms the best one.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..._ambiguity import Ambiguity
from ..._candidate import Candidate
from ..._checks._bytecode import compile_imported, uncompiled_sources
from ..._checks._inputs import vary_job
from ..._checks._spectrum import FAILING_CPU_FLOOR, TEST_CPU_FLOOR, Spectrum, record, split_checks, suspicion, trace_job
from ..._checks._widen import constant_texts
from ..._events import Event, emit
from ..._sandbox._warm import Worker
from ..._target._target import Target, find_function
from ..._verdict import Verdict
from .._proposer import BaseProposer, Request
from ._abstain import undecided
from ._edits import Operator
from ._judges import Judges, cores, failing_first
from ._module import BEFORE_FORK, Module
from ._operators import OPERATORS
from ._plan import Plan, Stats, judge_job
from ._rank import Evidence, behaviour_job, rank, unread_bindings
from ._ranked import Edit, Progress, Ranked
from ._scope import Scope

Suspicion = Callable[[int], float]
_GRACE = 0.5  # seconds past a candidate's own limit before its worker is killed
_TIMEOUT_WEIGHT = 25
_BATCH = 8  # candidates per job at most
_BATCH_SECONDS = 0.02  # what the original's checks may take, times the candidates of a job
_AGAIN = 8  # candidates that failed only by a time limit, judged again when none passed ...
_AGAIN_FACTOR = 4  # ... under this multiple of the candidate's limit (1 s at least), no per-test limits


class Engine(BaseProposer):
    """The default proposer: search over single edits of the target.

    ``operators`` is the set of edit families (all of ``OPERATORS`` by default). With ``validate``
    the engine runs the request's checks on candidates itself — in a forked warm worker where the
    platform has ``fork`` (``fork=False`` keeps it in this process) — and yields only those that
    pass, ranked; without, it yields every candidate lazily in search order for the session to judge.
    """

    name = "engine"
    trusted = True  # its edits are mutations of the user's own code (see regrow._proposers._proposer.BaseProposer)

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
        localize_timeout: float | None = None,  # per check on the original while localizing (None: time_ceiling)
        jobs: int | None = None,  # workers judging at once: the request's (the session's jobs=), else every core
        fresh: bool = False,  # judge each candidate in a fresh child (for tests that depend on their order)
        reuse: bool = True,  # a check that passed without reaching the edited statement is not run again
        abstain: bool = True,  # plausible candidates that disagree on derived inputs: offer none (docs/engine.md)
    ) -> None:
        self.operators = list(operators if operators is not None else OPERATORS)
        self.validate, self.fork = validate, fork
        self.neighbourhood = neighbourhood
        self.time_floor, self.time_factor, self.time_ceiling = time_floor, time_factor, time_ceiling
        # A check slower than any candidate may take is as good as hanging; one quicker is measured, not taken for a
        # hang (a passing test of 1.2 s, traced under 1 s, made every candidate's limit 0.2 s: no fix, ever).
        self.localize_timeout = time_ceiling if localize_timeout is None else localize_timeout
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs= is how many workers judge candidates at once: at least 1, not {jobs}")
        self.jobs = jobs
        self.fresh = fresh
        self.reuse = reuse
        self.abstain = abstain
        self.last_stats = Stats()
        self.ambiguity: Ambiguity | None = None  # why the last search offered nothing though candidates passed

    @property
    def stop_reason(self) -> str:
        """Why the last search ended without more to offer: a budget (and which), or every candidate judged."""
        return self.last_stats.stopped

    def propose(self, request: Request) -> Iterator[Candidate]:
        self.ambiguity = None
        if not self.validate or not request.checks:
            plan = self.plan(request)
            self.last_stats = plan.stats
            for candidate, _ in plan.candidates():
                yield candidate
            return
        jobs = self.jobs or request.jobs or cores()
        plans: list[Plan] = []  # the judging children make candidates from the plan they inherit
        with self._worker(request, plans) as worker, Judges(worker, jobs) as judges:
            plan = self.plan(request, worker)
            plans.append(plan)
            self.last_stats = plan.stats
            plan.stats.jobs = len(judges.workers)
            failing_first(request.checks, plan.spectrum)  # before the judging children fork
            found = self._search(plan, request, judges)
            ranking = rank(found, plan.spectrum, worker, plan.source)
            plan.stats.forks = judges.forks
        ranked = ranking.ranked
        if self.abstain and request.oracle and (ambiguity := undecided(ranking, plan.source)) is not None:
            self.ambiguity = ambiguity
            plan.stats.stopped = f"{ambiguity.summary()}: none offered"
            return
        if self.abstain and request.oracle and (doubt := ranking.doubt()):
            plan.stats.stopped = f"{doubt}: none offered"
            return
        # The worker is gone before the first yield: a session that stops early leaves no child behind.
        for number, evidence in enumerate(ranked, start=1):
            yield dataclasses.replace(evidence.candidate, note=evidence.note(number, len(ranked)))

    def _worker(self, request: Request, plans: list[Plan] | None = None) -> Worker:
        """A worker forked with the tests collected, ready to trace, judge and compare.

        Tracing runs only the original under the user's own checks, so it is the one trusted job (a child
        without the filter and the audit hook, see :class:`Worker`). Judging
        makes each candidate from the last of ``plans`` (put there before the first judging child forks).
        """
        target, checks = request.target, list(request.checks)
        fine = split_checks(checks)  # collects pytest suites now, so the child inherits them
        return Worker({
            "trace": trace_job(target, fine, self.localize_timeout),
            "sources": uncompiled_sources,
            "judge": judge_job(plans if plans is not None else [], target, checks),
            "vary": functools.partial(vary_job, texts=constant_texts(target.original_code)),
            "behaviour": behaviour_job(target),
        }, fork=self.fork, trusted={"trace", "sources"}, fresh=self.fresh, views=request.views, environ=request.environ)

    def plan(self, request: Request, worker: Worker | None = None) -> Plan:
        """Localize the fault (given a worker to run the checks in) and rank every edit of the target."""
        target, stats = request.target, Stats()
        started = time.monotonic()
        spectrum = None
        if worker is not None:
            if progress := _progress(request):
                progress(f"planning: localizing the fault with {len(request.checks)} check(s)")
            budget = started + max(request.deadline - started, 0.0) / 4
            spectrum = record(split_checks(request.checks), worker, self.localize_timeout, deadline=budget)
            compile_imported(worker, self.localize_timeout, budget)  # once here, not in every judging child
        stats.localize_seconds = time.monotonic() - started
        source = target.bare_source
        function = find_function(source, target.name)
        failing = request.failure.lineno or (spectrum.failing_line() if spectrum else None)
        score = suspicion(spectrum, failing)
        offset = target.def_lineno - 1  # site lines count from the def line; coverage has file lines
        scope = Scope.of(function, Module.of(target))
        left = max(request.deadline - time.monotonic(), 0.0)
        edits = Ranked(scope, self.operators, lambda site: score(site.line + offset), stats=stats,
                       deadline=request.deadline - min(2.0, left / 10), progress=_progress(request))
        plan = Plan(target, source, function, edits, spectrum, stats, reuse=self.reuse and not self.fresh)
        if worker is not None:  # judging children fork from here: what each needs first is worked out once
            scope.module.resolve(*BEFORE_FORK)
            plan.prepare()
        return plan

    def localize(self, request: Request) -> Suspicion:
        """How suspicious each line of the definition is (line 1 is the ``def``), higher first."""
        with self._worker(request) as worker:
            spectrum = record(split_checks(request.checks), worker, self.localize_timeout)
        score = suspicion(spectrum, request.failure.lineno or spectrum.failing_line())
        offset = request.target.def_lineno - 1
        return lambda line: score(line + offset)

    def candidate_timeout(self, spectrum: Spectrum | None) -> float:
        """A multiple of the original's runtime on the checks that passed (those that finished, if none
        passed), within floor and ceiling: a failing check that hangs must not set the limit; and, where a
        check fails, at least the limits of the passing checks that run the target (see
        :meth:`Spectrum.test_limits`)."""
        runs = (spectrum.passing or [run for run in spectrum.runs if not run.timed_out]) if spectrum else []
        finished = sorted(run.duration for run in runs)
        # The median run times the count: the first run in a fresh worker is slow, and must not set the limit.
        # Every check, the failing ones too, is expected to take about as long once it is fixed.
        spent = finished[len(finished) // 2] * len(spectrum.runs) if finished and spectrum else 0.0
        timeout = min(self.time_ceiling, max(self.time_floor, self.time_factor * spent))
        if spectrum is None or not spectrum.passing or not spectrum.failing:
            return timeout
        # Never below the limits of the passing checks that run the target: a failing check the candidate
        # must make pass may, once fixed, run as long as they do (its time on the original says little).
        own = spectrum.test_limits(self.time_ceiling)
        ran = [run for run in spectrum.passing if run.lines] or spectrum.passing  # as Spectrum.test_limits reads them
        return max([timeout, *(own[run.check] for run in ran)])

    def batch(self, spectrum: Spectrum | None) -> int:
        """How many candidates a worker judges per job: as many as the original's checks run in about
        ``_BATCH_SECONDS`` (at most ``_BATCH``), so that quick candidates cost the host one exchange per
        batch, not one each, while a slow one is still handed out alone (a job that overruns or crashes
        is judged again one candidate at a time, see :meth:`Judges.verdicts`)."""
        if spectrum is None or self.fresh or any(run.timed_out for run in spectrum.runs):
            return 1  # a check that hangs on the original may hang on its candidates
        # What one candidate may run: the failing checks and the passing ones that ran the target (a check
        # that never ran it passes unrun: see Plan.unreached), not the whole suite.
        spent = sum(run.duration for run in spectrum.runs if not run.passed or run.lines or not self.reuse)
        return max(1, min(_BATCH, int(_BATCH_SECONDS / max(spent, 1e-6))))

    def _search(self, plan: Plan, request: Request, judges: Judges) -> list[Evidence]:
        """Judge candidates in search order (several at once, read back in order) until a budget is spent,
        the neighbourhood of the first plausible one is explored, or there are no more."""
        stats = plan.stats
        stats.candidate_timeout = timeout = self.candidate_timeout(plan.spectrum)
        if plan.spectrum is not None:  # before the forks
            plan.limits = plan.spectrum.test_limits(timeout)
            plan.cpu_limits = plan.spectrum.test_limits(timeout, TEST_CPU_FLOOR, cpu=True,
                                                        failing_floor=FAILING_CPU_FLOOR)
        started = time.monotonic()
        reserve = min(2.0, max(0.0, request.deadline - started) / 10)  # left for ranking and the session's proof
        deadline = request.deadline - reserve
        budget = max(request.max_candidates - len(request.history), 0)
        found: list[Evidence] = []
        slow: list[Edit] = []  # failed by a time limit alone: a loaded machine stalls a right fix too
        seen = {plan.original}  # what the candidates read so far compile to
        since_first = 0  # counted, not timed, so that the same inputs give the same neighbourhood
        round = 0  # the workers' own dedup holds within a round (see judge_job); a restart begins a new one
        text = request.screen_texts and bool(request.events)  # a front-end shows every candidate judged

        def limit() -> int | None:
            return found[0].candidate.edit_size if found else None

        def search(after: Edit | None = None, rivals: bool = False) -> Iterator[Edit]:
            return itertools.chain(plan.order(limit, after, rivals), _unless(found, lambda: plan.couples))

        def send(worker: Worker, edits: list[Edit], dedup: bool = True) -> None:
            worker.send("judge", [edit.index for edit in edits], None, round if dedup else None, timeout, text,
                        timeout=len(edits) * timeout + _GRACE, read=_answers(len(edits)))

        def settle(edit: Edit, outcome: tuple[str, Any]) -> dict[str, Any]:
            status, answer = outcome
            if status == "ok" and answer.get("seen") and answer["key"] not in seen:  # settled in search order
                status, answer = "refused", "refused an answer of 'judged already' for a candidate not judged before"
            if status == "ok":
                return answer  # type: ignore[no-any-return]
            made = plan.make(edit)  # the child gave no answer: its text and code are made here (rarely)
            return _failed(plan.target, timeout, status, answer, *(made[:3] if made else ("", object(), 0)))

        stats.batch = batch = self.batch(plan.spectrum)
        verdicts = judges.verdicts(search(), send, settle, batch=batch,
                                   again=lambda worker, edits: send(worker, edits, dedup=False), deadline=deadline)
        stats.stopped = ""
        try:
            for edit, verdict in verdicts:
                if not verdict["made"] or verdict["key"] in seen:  # does not compile, or a candidate read before
                    continue
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
                seen.add(verdict["key"])
                stats.candidates += 1
                stats.evaluated += 1
                candidate = plan.candidate(edit, verdict["text"], verdict["size"])
                if request.events:
                    emit(request.events, Event("verdict", plan.target.qualname, request.attempt, candidate,
                                               Verdict(verdict["ok"], verdict["check"], verdict["reason"])))
                if found:  # a mutant that hangs costs its whole time limit: it uses up more of the neighbourhood
                    since_first += _TIMEOUT_WEIGHT if verdict["check"] == "sandbox" else 1
                if not verdict["ok"]:
                    if _timed_out(verdict):
                        stats.out_of_time += 1
                        if len(slow) < _AGAIN:
                            slow.append(edit)
                    continue
                found.append(Evidence(candidate, edit.op.tier, stats.evaluated))
                if len(found) == 1:
                    stats.first = stats.evaluated
                    # What was handed out ahead was chosen without the size limit the first find sets:
                    # go on from here as one worker would have (after a pair, nothing: pairs end at a find).
                    round += 1
                    verdicts.restart(() if edit.second is not None else search(edit, revives(plan.source, candidate)))
            if verdicts.expired and not stats.stopped:  # the deadline came while a verdict was awaited
                stats.stopped = f"time budget spent after {stats.evaluated} candidates (raise timeout / --timeout)"
        finally:
            verdicts.close()
        if not found and not stats.stopped and slow:
            found = self._again(plan, request, judges.workers[0], slow, max(timeout * _AGAIN_FACTOR, 1.0), deadline)
        stats.plausible = len(found)
        stats.search_seconds = time.monotonic() - started
        if not stats.stopped:
            stats.stopped = (f"search space exhausted: all {stats.evaluated} candidates judged" if found else
                             f"search space exhausted: all {stats.evaluated} candidates failed")
        return found


    def _again(self, plan: Plan, request: Request, worker: Worker, slow: list[Edit], limit: float,
               deadline: float) -> list[Evidence]:
        """The first of ``slow`` (in search order) that passes when judged again under ``limit`` seconds
        and without per-test limits, as the session's proof judges it: when every candidate failed, one
        that failed only by running out of time may have been stalled by the machine, not by a bug."""
        for edit in slow:
            left = deadline - time.monotonic()
            made = plan.make(edit)
            if left <= 0.1 or made is None:
                break
            plan.stats.again += 1
            verdict = judge(worker, plan.target, made.text, min(limit, left))
            candidate = plan.candidate(edit, made.text, made.size)
            if request.events:
                emit(request.events, Event("verdict", plan.target.qualname, request.attempt, candidate,
                                           Verdict(verdict["ok"], verdict["check"], verdict["reason"])))
            if verdict["ok"]:
                plan.stats.first = plan.stats.first or plan.stats.evaluated
                return [Evidence(candidate, edit.op.tier, plan.stats.evaluated)]
        return []


def _timed_out(verdict: dict[str, Any]) -> bool:
    """Whether a failed verdict is a time limit's: the candidate's own, or a test's (see _test_limits)."""
    reason = str(verdict.get("reason", ""))
    return (verdict.get("check") == "sandbox" and reason.startswith("timed out after")) or \
        "(its own limit, from its time on the original)" in reason


def revives(original: str, candidate: Candidate) -> bool:
    """Whether ``candidate`` reads a parameter or variable ``original`` binds and never reads: an ignored
    argument put back to use, which may be used in more ways than the one the tests happen to pass."""
    return bool(unread_bindings(original) - unread_bindings(candidate.source))


def _progress(request: Request) -> Progress | None:
    """Where planning reports how far it got: a ``progress`` event to the request's handlers, if any."""
    if not request.events:
        return None
    target, attempt, handlers = request.target.qualname, request.attempt, request.events
    return lambda message: emit(handlers, Event("progress", target, attempt, message=message))


def _unless(found: list[Evidence], then: Callable[[], list[Edit]]) -> Iterator[Edit]:
    """The pairs ``then()`` while nothing is ``found``: a pair is searched only once every single edit
    failed, and the first pair that passes is the one (pairs come most likely first; among several, the
    one that changes the original least is rarely the one meant). They are made only then: most searches
    find a single edit, and making the pairs walks far into the single edits (~10 ms at idna's size)."""
    if found:
        return
    for pair in then():
        if found:
            return
        yield pair


def judge(worker: Worker, target: Target, source: str, timeout: float) -> dict[str, Any]:
    """The verdict on ``source`` from the worker's ``"judge"`` job: ``{ok, check, reason}``."""
    status, answer = worker.call("judge", None, source, 0, timeout, False, timeout=timeout + _GRACE,
                                 read=_answers(1))
    verdict = answer[0] if status == "ok" else _failed(target, timeout, status, answer, source, "", 0)
    return {key: verdict[key] for key in ("ok", "check", "reason")}


def _failed(target: Target, timeout: float, status: str, detail: Any, text: str, key: object,
            size: int) -> dict[str, Any]:
    """The verdict on a candidate whose ``"judge"`` job ended without one (timeout, crash, a refusal of
    the guard, a malformed reply): failed, of the check ``"sandbox"``, with the reason."""
    target.restore()  # an in-process evaluation cut short may not have put it back
    why = {"timeout": f"timeout after {timeout:.2g}s", "refused": str(detail)}.get(status, f"{status}: {detail}")
    return {"made": True, "key": key, "size": size, "text": text, "ok": False, "check": "sandbox", "reason": why}


_ANSWER = {"made": bool, "key": str, "size": int, "seen": bool, "ok": bool, "check": str, "reason": str, "text": str}


def _answers(count: int) -> Callable[[Any], list[dict[str, Any]]]:
    """Reads a ``"judge"`` reply of ``count`` answers, each checked by :func:`_read_answer`."""

    def read(data: Any) -> list[dict[str, Any]]:
        if type(data) is not list or len(data) != count:
            raise ValueError(f"not the verdicts asked for: expected a list of {count}")
        return [_read_answer(answer) for answer in data]

    return read


def _read_answer(data: Any) -> dict[str, Any]:
    """A ``"judge"`` reply from the worker, checked: ``ValueError`` unless it has the shape judge_job gives."""
    if type(data) is not dict or type(data.get("made")) is not bool:
        raise ValueError("not a verdict: expected {made: bool, ...}")
    fields = ("made",) if not data["made"] else ("made", "key", "size", "seen") if data.get("seen") else tuple(_ANSWER)
    if set(data) != set(fields) or any(type(data[field]) is not _ANSWER[field] for field in fields):
        raise ValueError(f"not a verdict: expected the fields {', '.join(fields)}")
    return data

"""Validation in several warm workers at once: the same search, the same patches, whatever the count."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from regrow._checks._oracles import TestCallable
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._engine._judges import Judges
from regrow._proposers._proposer import Request
from regrow._result import Budget
from regrow._sandbox._warm import Worker
from regrow._session._loop import Session
from regrow._target._target import Target


def weighted_mean(values: list[float], weights: list[float]) -> float:
    total = 0.0
    for value, weight in zip(values, weights, strict=True):
        total += value * weight
    return total / len(weights)  # the bug: should divide by sum(weights)


def checks() -> list[TestCallable]:
    def test_equal(fn: Callable[..., float]) -> None:
        assert fn([2.0, 4.0], [1.0, 1.0]) == 3.0

    def test_weighted(fn: Callable[..., float]) -> None:
        assert fn([1.0, 3.0], [3.0, 1.0]) == 1.5

    def test_one(fn: Callable[..., float]) -> None:
        assert fn([5.0], [2.0]) == 5.0

    return [TestCallable(test_equal), TestCallable(test_weighted), TestCallable(test_one)]


def request(func: Callable[..., Any], seconds: float = 60.0, **fields: Any) -> Request:
    target = Target.of(func)
    return Request(target, check_failure("test", target.func, "failing"), [], checks(), 1,
                   time.monotonic() + seconds, **fields)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="several workers need fork")
def test_the_same_patches_in_the_same_order_whatever_the_number_of_workers() -> None:
    runs = {}
    for jobs in (1, 2, 3):
        engine = Engine(jobs=jobs)
        fixes = list(engine.propose(request(weighted_mean)))
        stats = engine.last_stats
        runs[jobs] = ([fix.source for fix in fixes], stats.evaluated, stats.first, stats.plausible)
        assert stats.jobs == jobs
    assert runs[1][0], "the engine found no fix"
    assert "sum(weights)" in runs[1][0][0]
    assert runs[2] == runs[1] and runs[3] == runs[1]


def test_the_request_says_how_many_workers_unless_the_engine_does() -> None:
    engine = Engine()
    list(engine.propose(request(weighted_mean, jobs=1)))
    assert engine.last_stats.jobs == 1
    with pytest.raises(ValueError, match="at least 1"):
        Engine(jobs=0)


def slow_square(x: int) -> int:
    time.sleep(0.05)
    return x * x


def slow_squares(xs: list[int]) -> list[int]:
    return [slow_square(x) for x in xs]


def test_verdicts_come_back_in_order_and_a_restart_drops_what_ran_ahead() -> None:
    first = Worker({"square": slow_square, "squares": slow_squares})
    with Judges(first, 3) as judges:
        assert len(judges.workers) == 3
        verdicts = judges.verdicts(range(10), lambda worker, group: worker.send("squares", group, timeout=5),
                                   lambda n, outcome: outcome[1])
        seen = []
        for item, value in verdicts:
            seen.append((item, value))
            if item == 2:  # what was handed out after 2 is dropped unread; the search goes on from 100
                verdicts.restart(iter([100, 101]))
        assert seen == [(0, 0), (1, 1), (2, 4), (100, 10000), (101, 10201)]
        # every worker's child still answers, with nothing of the dropped jobs left to take
        assert all(worker.call("square", 3, timeout=5) == ("ok", 9) for worker in judges.workers)


def boom(xs: list[int]) -> list[int]:
    if 4 in xs:
        os._exit(3)  # a candidate that kills its worker: that worker respawns, the others go on
    return xs


def test_a_worker_killed_mid_search_is_replaced_and_the_order_kept() -> None:
    with Judges(Worker({"boom": boom}), 2) as judges:
        got = [(item, status) for item, status in
               judges.verdicts(range(8), lambda worker, group: worker.send("boom", group, timeout=5),
                               lambda n, outcome: outcome[0])]
    assert [item for item, _ in got] == list(range(8))
    assert [status for _, status in got] == ["ok"] * 4 + ["crashed"] + ["ok"] * 3


def judged_in(xs: list[int]) -> list[int]:
    if 5 in xs:
        os._exit(3)  # one item of a batch kills the child: which one, only judging each alone tells
    while 9 in xs:  # one loops where no signal reaches it
        pass
    return xs


@pytest.mark.skipif(not hasattr(os, "fork"), reason="batches need pipelined jobs, which need fork")
def test_a_batch_that_fails_is_judged_again_one_item_at_a_time_and_only_the_culprit_is_charged() -> None:
    with Judges(Worker({"batch": judged_in}), 2) as judges:
        got = list(judges.verdicts(range(12), lambda worker, group: worker.send("batch", group, timeout=5),
                                   lambda n, outcome: outcome[0], batch=4))
    assert [item for item, _ in got] == list(range(12))
    assert [status for _, status in got] == ["ok"] * 5 + ["crashed"] + ["ok"] * 3 + ["timeout"] + ["ok"] * 2


def batched_square(xs: list[int]) -> list[int]:
    return [x * x for x in xs]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="batches need pipelined jobs, which need fork")
def test_batches_are_read_back_in_order_and_a_restart_inside_one_drops_the_rest() -> None:
    sent: list[list[int]] = []

    def send(worker: Worker, group: list[int]) -> None:
        sent.append(group)
        worker.send("squares", group, timeout=5)

    with Judges(Worker({"squares": batched_square}), 2) as judges:
        verdicts = judges.verdicts(range(20), send, lambda n, outcome: outcome[1], batch=3)
        seen = []
        for item, value in verdicts:
            seen.append((item, value))
            if item == 4:
                verdicts.restart(iter([7, 8]))
    assert seen == [(0, 0), (1, 1), (2, 4), (3, 9), (4, 16), (7, 49), (8, 64)]
    assert sent[:2] == [[0, 1, 2], [3, 4, 5]] and all(len(group) <= 3 for group in sent)


def looped(xs: list[int]) -> list[int]:
    while True:
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pipelined jobs need fork")
def test_closing_the_verdicts_does_not_wait_out_jobs_that_overrun() -> None:
    # The search stopped: the loops handed out ahead are not waited for to their time limit; their
    # workers are renewed, and answer the next job at once.
    with Judges(Worker({"loop": looped, "squares": batched_square}), 2) as judges:
        verdicts = judges.verdicts(range(8), lambda worker, group: worker.send("loop", group, timeout=30),
                                   lambda n, outcome: outcome, batch=2)
        verdicts._fill()
        forks = [worker.forks for worker in judges.workers]
        assert forks == [1, 1] and all(worker.busy == 2 for worker in judges.workers)
        verdicts.close()
        assert all(worker.busy == 0 for worker in judges.workers)
        assert [worker.call("squares", [3], timeout=5) for worker in judges.workers] == [("ok", [9])] * 2
        assert [worker.forks for worker in judges.workers] == [2, 2]  # killed at close, forked afresh


def late_exit(x: int) -> int:
    if x == 1:  # answers, then kills its child while the next job runs there
        threading.Timer(0.15, os._exit, (4,)).start()
    time.sleep(0.3 if x == 2 else 0)
    return x


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pipelined jobs need fork")
def test_a_death_that_an_earlier_job_caused_is_not_charged_to_the_next_one() -> None:
    # Two jobs wait in a child's pipe at once. The first leaves a thread running (its answer says so: an
    # error, as in every sandbox), which kills the child while the second runs. The second runs again in a
    # fresh child, where it passes: only a job that kills a child it ran in first is charged with the death.
    with Worker({"late": late_exit}) as worker:
        for n in (1, 2, 3):
            worker.send("late", n, timeout=5)
        first, *rest = [worker.take() for _ in range(3)]
        assert first[0] == "error" and "left 1 thread(s) running" in first[1], first
        assert rest == [("ok", 2), ("ok", 3)]
        assert worker.forks == 2
        assert worker.call("late", 3, timeout=5) == ("ok", 3)


def hang_or_echo(x: int) -> int:
    while x == 0:
        pass
    return x


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pipelined jobs need fork")
def test_an_overrun_costs_the_job_that_overran_and_the_one_queued_behind_it_runs_in_a_fresh_child() -> None:
    with Worker({"job": hang_or_echo}) as worker:
        worker.send("job", 0, timeout=0.3)
        worker.send("job", 7, timeout=5)
        assert worker.depth == 2 and worker.busy == 2
        assert worker.take() == ("timeout", None)
        assert worker.take() == ("ok", 7)
        assert worker.forks == 2 and worker.busy == 0


def forge(x: int) -> int:
    if x == 1:  # a frame that claims to answer a later job, written on the reply pipe
        from regrow._sandbox._channel import encode, write_frame

        for fd in range(3, 1024):
            with contextlib.suppress(OSError):
                write_frame(fd, encode({"kind": "result", "seq": 99, "status": "ok", "value": 42}, 1 << 20))
    return x


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pipelined jobs need fork")
def test_a_frame_for_another_job_ends_the_job_that_sent_it_as_refused() -> None:
    with Worker({"forge": forge}, trusted={"forge"}) as worker:  # trusted: the guard would refuse the writes
        for n in (1, 2):
            worker.send("forge", n, timeout=5)
        first, second = worker.take(), worker.take()
    assert first[0] == "refused" and "forged" in first[1]
    assert second == ("ok", 2)


def test_call_refuses_to_run_while_sent_jobs_wait_to_be_taken() -> None:
    with Worker({"one": lambda: 1}) as worker:
        worker.send("one", timeout=5)
        with pytest.raises(RuntimeError, match="take"):
            worker.call("one", timeout=5)
        assert worker.take() == ("ok", 1)
        with pytest.raises(RuntimeError, match="no job sent"):
            worker.take()


def test_a_spent_candidate_budget_is_reported_as_such_not_as_an_exhausted_search() -> None:
    target = Target.of(weighted_mean)
    session = Session(target, check_failure("test", target.func, "failing"), checks(), [Engine(jobs=1)],
                      budget=Budget(max_candidates=3, timeout=60))
    result = session.run(install=False)
    assert not result.ok
    assert "candidate budget of 3 spent" in result.reason and "max_candidates" in result.reason, result.reason


def test_an_exhausted_search_says_so() -> None:
    def never(fn: Callable[..., float]) -> None:
        assert fn([1.0], [1.0]) == 42.0  # no single edit makes this true

    target = Target.of(weighted_mean)
    engine = Engine(jobs=1, operators=[op for op in Engine().operators if op.name == "binary-op"])
    session = Session(target, check_failure("test", target.func, "failing"), [TestCallable(never)], [engine],
                      budget=Budget(timeout=60))
    result = session.run(install=False)
    assert not result.ok
    assert "search space exhausted: all" in result.reason and "candidates failed" in result.reason, result.reason
    assert dataclasses.asdict(engine.last_stats)["stopped"].startswith("search space exhausted")


def halve(n: int) -> int:
    return n // 3  # the bug: should halve


def test_heal_and_repair_take_jobs_and_refuse_nonsense() -> None:
    import regrow

    seen: list[int] = []

    def listen(event: Any) -> None:
        if event.type == "session_start":
            seen.append(1)

    def test_halves(fn: Callable[..., int]) -> None:
        assert fn(8) == 4 and fn(2) == 1

    result = regrow.repair(halve, (8,), tests=[test_halves], jobs=2, on_event=listen, install=False)
    assert result.ok and "n // 2" in (result.fix.source if result.fix else ""), result.reason
    assert seen
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="jobs= is how many workers"):
            regrow.heal(jobs=bad)  # type: ignore[arg-type]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="several workers need fork")
def test_edits_that_compile_to_the_same_code_are_judged_as_one_candidate() -> None:
    # docs/engine.md: two edits that compile to the same code are counted once, in search order, whatever
    # worker made them. Some edits of weighted_mean do (a parenthesised copy of an expression, say).
    from regrow._proposers._engine._plan import digest

    seen: list[str] = []
    req = request(weighted_mean, events=(lambda event: seen.append(event.candidate.source)
                                         if event.type == "verdict" else None,))
    engine = Engine(jobs=2, neighbourhood=10_000)
    list(engine.propose(req))
    target = Target.of(weighted_mean)
    with engine._worker(req) as worker:
        plan = engine.plan(req, worker)
    made = [m for m in map(plan.make, plan.edits) if m is not None]
    assert len({m.key for m in made}) < len(made)  # duplicates exist among the edits...
    judged = [digest(target.compile(source).__code__) for source in seen]
    assert judged and len(set(judged)) == len(judged)  # ...and none was judged twice
    assert plan.original not in judged
    assert engine.last_stats.evaluated == len(judged)


def test_a_candidate_judged_again_after_its_batch_failed_gets_a_verdict_not_judged_already() -> None:
    # A batch that fails is judged again one candidate at a time, in the same child. The child must not
    # answer "judged already" then: the earlier twin it judged was in the failed batch, whose answers
    # the host never read (the host would find a twin it never read, and have no verdict for it).
    from regrow._proposers._engine._plan import judge_job

    req = request(weighted_mean)
    engine = Engine()
    with engine._worker(req) as worker:
        plan = engine.plan(req, worker)
    made = [(edit, m) for edit, m in ((edit, plan.make(edit)) for edit in plan.edits) if m is not None]
    first, twin = next((a, b) for i, a in enumerate(made) for b in made[i + 1:] if a[1].key == b[1].key)
    job = judge_job([plan], req.target, list(req.checks))
    batch = job([first[0].index, twin[0].index], None, 1, 2.0, False)
    assert [answer.get("seen") for answer in batch] == [False, True]
    assert job([twin[0].index], None, 1, 2.0, False)[0]["seen"] is True  # same round: the host read the first
    again = job([twin[0].index], None, None, 2.0, False)[0]  # judged again: a whole verdict
    assert again["seen"] is False and again["key"] == first[1].key and {"ok", "check", "reason"} <= set(again)


def test_a_batch_holds_as_many_candidates_as_the_checks_run_in_20_ms_at_most_8_and_one_after_a_hang() -> None:
    from regrow._checks._spectrum import Run, Spectrum

    def spectrum(*durations: float, hung: bool = False, elsewhere: float = 0.0) -> Spectrum:
        runs = [Run(f"c{i}", True, frozenset({3}), d, []) for i, d in enumerate(durations)]
        runs += [Run("elsewhere", True, frozenset(), elsewhere, [])] if elsewhere else []  # never runs the target
        return Spectrum(runs + ([Run("hang", False, frozenset(), 1.0, [], timed_out=True)] if hung else []))

    engine = Engine()
    assert engine.batch(spectrum(0.0001, 0.0001)) == 8  # quick checks: the most
    assert engine.batch(spectrum(0.004, 0.001)) == 4  # 20 ms / 5 ms
    assert engine.batch(spectrum(0.5)) == 1  # a slow original: one at a time
    # a slow test that never runs the target passes unrun for every candidate: it does not count...
    assert engine.batch(spectrum(0.004, 0.001, elsewhere=0.5)) == 4
    assert Engine(reuse=False).batch(spectrum(0.004, 0.001, elsewhere=0.5)) == 1  # ...unless every test runs
    assert engine.batch(spectrum(0.0001, hung=True)) == 1  # a check that hung may hang on a candidate
    assert Engine(fresh=True).batch(spectrum(0.0001)) == 1 and engine.batch(None) == 1

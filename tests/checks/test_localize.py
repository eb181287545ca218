"""Fault localization: coverage of the original on each check, scored with Ochiai."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import pytest

from regrow._checks._inputs import Call, derive
from regrow._checks._oracles import TestCallable
from regrow._checks._spectrum import TEST_FLOOR, Run, Spectrum, record, suspicion, trace_job
from regrow._proposers._engine import Engine
from regrow._sandbox._warm import Worker
from regrow._target._target import Target


def shipping(weight: float, express: bool) -> float:
    cost = 5.0
    if weight > 10:
        cost += weight * 0.5
    if express:
        cost = cost * 3  # the bug: express should double
    return cost


def spin(n: int) -> int:
    while n != 1:
        n = n + 0  # never reaches 1
    return n


def line_of(func: Callable[..., Any], text: str) -> int:
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


def checks() -> list[TestCallable]:
    def test_light(fn: Callable[..., float]) -> None:
        assert fn(1, False) == 5.0

    def test_heavy(fn: Callable[..., float]) -> None:
        assert fn(20, False) == 15.0

    def test_express(fn: Callable[..., float]) -> None:
        assert fn(1, True) == 10.0

    return [TestCallable(test_light), TestCallable(test_heavy), TestCallable(test_express)]


def spectrum_of(func: Callable[..., Any], tests: list[TestCallable], timeout: float = 1.0) -> Spectrum:
    target = Target.of(func)
    with Worker({"trace": trace_job(target, tests, timeout)}, trusted={"trace"}) as worker:
        return record(tests, worker, timeout)


def test_ochiai_ranks_the_buggy_line_first() -> None:
    spectrum = spectrum_of(shipping, checks())
    assert [run.passed for run in spectrum.runs] == [True, True, False]
    score = suspicion(spectrum, None)
    buggy = line_of(shipping, "cost * 3")
    others = [line_of(shipping, text) for text in ("cost = 5.0", "weight > 10", "weight * 0.5", "return cost")]
    assert all(score(buggy) > score(line) for line in others)


def test_the_checks_inputs_are_recorded() -> None:
    spectrum = spectrum_of(shipping, checks())
    assert [c.open().args for c in spectrum.calls()] == [(1, False), (20, False), (1, True)]
    assert [c.open().args for c in spectrum.calls(passing_only=True)] == [(1, False), (20, False)]


def test_tracing_restores_the_function() -> None:
    code = shipping.__code__
    spectrum_of(shipping, checks())
    assert shipping.__code__ is code
    assert shipping(1, True) == 15.0


def test_a_hanging_check_fails_in_time_with_its_coverage() -> None:
    def test_spin(fn: Callable[[int], int]) -> None:
        assert fn(5) == 1

    started = time.monotonic()
    spectrum = spectrum_of(spin, [TestCallable(test_spin)], timeout=0.3)
    assert time.monotonic() - started < 3
    (run,) = spectrum.runs
    assert run.timed_out and not run.passed
    assert line_of(spin, "n = n + 0") in run.lines


def test_without_coverage_the_nearest_line_to_the_failure_ranks_first() -> None:
    score = suspicion(Spectrum([]), failing_line=10)
    assert score(10) > score(9) > score(7)
    assert score(11) == score(9)


def test_ochiai_formula() -> None:
    runs = [Run("f1", False, frozenset({1, 2}), 0, []), Run("f2", False, frozenset({1}), 0, []),
            Run("p1", True, frozenset({1, 3}), 0, [])]
    scores = Spectrum(runs).ochiai()
    assert scores[1] == 2 / (2 * 3) ** 0.5
    assert scores[2] == 1 / (2 * 1) ** 0.5
    assert scores[3] == 0.0


def test_derived_inputs_are_small_changes() -> None:
    made = derive([Call((3, [1, 2], " ab "), {})])
    assert Call((4, [1, 2], " ab "), {}) in made
    assert Call((3, [1], " ab "), {}) in made
    assert Call((3, [2, 1], " ab "), {}) in made
    assert Call((3, [1, 2], "ab"), {}) in made
    assert Call((3, [1, 2], " ab "), {}) not in made


def test_the_candidate_limit_comes_from_passing_runs_not_from_one_that_hung():
    engine = Engine(time_floor=0.01, time_factor=10.0, time_ceiling=100.0)
    fast = Run("test_fast", True, frozenset(), 0.002, [])
    hung = Run("test_hung", False, frozenset(), 3.0, [], timed_out=True)
    caught = Run("test_caught", False, frozenset(), 3.0, [])  # failed after the limit struck, but not marked
    # 10x the passing run's time per run, raised to the passing test's own limit (TEST_FLOOR): not the 3 s
    assert engine.candidate_timeout(Spectrum([fast, hung, caught])) == pytest.approx(max(10 * 0.002 * 3, TEST_FLOOR))
    # with nothing passing, the failing runs that finished set it
    assert engine.candidate_timeout(Spectrum([caught, hung])) == pytest.approx(10 * 3.0 * 2)


def test_the_candidate_limit_is_never_below_the_limits_of_the_passing_tests_that_run_the_target():
    # A failing test that fails at once on the bug may run as long as the passing tests that reach the
    # target once it is fixed: their limits (at least TEST_FLOOR) bound the candidate's from below.
    engine = Engine(time_floor=0.01, time_factor=10.0, time_ceiling=100.0)
    quick = [Run(f"test_quick{n}", True, frozenset({3}), 0.002, []) for n in range(3)]
    slow = Run("test_slow", True, frozenset({3}), 0.5, [])
    failing = Run("test_failing", False, frozenset({3}), 0.001, [])
    spectrum = Spectrum([*quick, slow, failing])  # the runs' multiple is 0.1 s; test_slow's limit is 5 x 0.5 s
    assert engine.candidate_timeout(spectrum) == pytest.approx(5 * 0.5)
    assert Engine(time_floor=0.01, time_factor=10.0, time_ceiling=100.0).candidate_timeout(
        Spectrum([quick[0], failing])) == pytest.approx(TEST_FLOOR)
    # with no passing test, its limit would be only the ceiling: the runs that finished set the candidate's
    assert engine.candidate_timeout(Spectrum([failing])) == pytest.approx(10 * 0.001)


def test_a_check_that_traces_itself_is_still_covered_and_sees_its_own_tracer() -> None:
    # The engine's tracer nests with the check's own (3.10/3.11: both are sys.settrace tracers; 3.12+:
    # the engine's is sys.monitoring's): neither loses a line, and the check's sys.gettrace() is its own.
    import sys

    seen: list[int] = []

    def test_express_traced(fn: Callable[..., float]) -> None:
        def mine(frame: Any, event: str, arg: object) -> Any:
            if event == "line" and frame.f_code.co_name == "shipping":
                seen.append(frame.f_lineno)
            return mine

        previous = sys.gettrace()
        sys.settrace(mine)
        try:
            assert sys.gettrace() is mine
            value = fn(1, True)
        finally:
            sys.settrace(previous)
        assert seen, "the check's own tracer saw no line"
        assert value == 10.0

    spectrum = spectrum_of(shipping, [TestCallable(test_express_traced)])
    bug = line_of(shipping, "cost * 3")
    (run,) = spectrum.runs
    assert not run.passed and "assert 15.0 == 10.0" in run.reason  # failed on the value, not on gettrace
    assert bug in run.lines and line_of(shipping, "if express") in run.lines


def countdown(n: int, step: int) -> int:
    total = 0
    while n != 0:  # the bug: `n > 0`; a step that does not divide n never ends
        n -= step
        total += 1
    return total


def test_the_lines_a_hanging_check_keeps_running_rank_above_the_rest_it_ran() -> None:
    def test_even(fn: Callable[[int, int], int]) -> None:
        assert fn(4, 2) == 2

    def test_one(fn: Callable[[int, int], int]) -> None:
        assert fn(3, 1) == 3

    def test_odd(fn: Callable[[int, int], int]) -> None:
        assert fn(3, 2) == 2

    spectrum = spectrum_of(countdown, [TestCallable(test_even), TestCallable(test_one), TestCallable(test_odd)],
                           timeout=0.3)
    hanging = spectrum.runs[2]
    assert hanging.timed_out and Run.from_plain(hanging.to_plain()) == hanging
    start, loop = line_of(countdown, "total = 0"), line_of(countdown, "while n != 0")
    body = line_of(countdown, "n -= step")
    assert {loop, body} <= hanging.hot and start not in hanging.hot
    score = suspicion(spectrum, spectrum.failing_line())
    # every check ran every one of these lines: Ochiai ties them; the loop the hanging check is caught in wins
    assert score(loop) > score(start) and score(body) > score(start)

"""The engine end to end: search, validation in a warm worker, ranking, and the fast pytest runner."""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from regrow._candidate import Candidate
from regrow._checks._oracles import CheckFailed, PytestTests, TestCallable
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._engine._rank import Evidence
from regrow._proposers._proposer import Request
from regrow._sandbox._warm import Worker
from regrow._session._loop import Session
from regrow._target._target import Target


def largest(values: list[int]) -> int:
    best = values[0]
    for value in values:
        if value < best:  # noqa: PLR1730 - the bug the tests repair
            best = value
    return best


def mean(values: list[float]) -> float:
    return sum(values) / (len(values) + 1)


def mean_counted(values: list[float]) -> float:
    return sum(values) / (sum(1 for v in values) + 1)


def countdown(n: int) -> int:
    steps = 0
    while n > 0:
        n -= 1
        steps += 2
    return steps


def largest_checks() -> list[TestCallable]:
    def test_three(fn: Callable[..., int]) -> None:
        assert fn([1, 3, 2]) == 3

    def test_single(fn: Callable[..., int]) -> None:
        assert fn([5]) == 5

    return [TestCallable(test_three), TestCallable(test_single)]


def request_for(func: Callable[..., Any], checks: list[Any], seconds: float = 20.0) -> Request:
    target = Target.of(func)
    return Request(target, check_failure("test", target.func, "failing"), [], checks, 1, time.monotonic() + seconds)


def test_engine_fixes_and_ranks_with_evidence() -> None:
    engine = Engine()
    fixes = list(engine.propose(request_for(largest, largest_checks())))
    assert fixes, engine.last_stats
    best = fixes[0]
    assert "if value > best:" in best.source
    assert best.edit_size == 1 and best.operator == "compare-op"
    assert best.note.startswith(f"rank 1/{len(fixes)}; edit size 1;") and "confidence" in best.note
    assert engine.last_stats.evaluated >= engine.last_stats.plausible == len(fixes)


def test_engine_is_deterministic() -> None:
    first = [c.source for c in Engine().propose(request_for(largest, largest_checks()))]
    second = [c.source for c in Engine().propose(request_for(largest, largest_checks()))]
    assert first == second
    lazy = [c.source for c in Engine(validate=False).propose(request_for(largest, []))]
    assert lazy == [c.source for c in Engine(validate=False).propose(request_for(largest, []))]
    assert len(lazy) == len(set(lazy))


def test_mutants_that_loop_forever_cost_only_their_time_limit() -> None:
    def test_three(fn: Callable[[int], int]) -> None:
        assert fn(3) == 3

    engine = Engine(time_floor=0.1)
    started = time.monotonic()
    fixes = list(engine.propose(request_for(countdown, [TestCallable(test_three)])))
    assert time.monotonic() - started < 15
    assert any("steps += 1" in fix.source for fix in fixes)
    assert countdown(3) == 6  # the live function is untouched


def test_in_process_validation_without_fork() -> None:
    fixes = list(Engine(fork=False).propose(request_for(largest, largest_checks())))
    assert "if value > best:" in fixes[0].source


def test_keeping_the_originals_behaviour_near_the_failing_input_is_no_merit() -> None:
    def test_pair(fn: Callable[..., float]) -> None:
        assert fn([2.0, 4.0]) == 3.0

    def test_one(fn: Callable[..., float]) -> None:
        assert fn([6.0]) == 6.0

    # Both tests fail on the original. ``/ (sum(1 for v in values[1:]) + 1)`` keeps its 0.0 on [] (a shortened
    # failing input, where the original is wrong); the plain ``/ (sum(1 for v in values))`` raises there, as a
    # mean of nothing should. Agreeing with the original there is no merit (it used to demote the
    # plain fix, as raising where the original returned): the plain fix ranks first.
    checks = [TestCallable(test_pair), TestCallable(test_one)]
    fixes = list(Engine(abstain=False).propose(request_for(mean_counted, checks)))
    by_source = {fix.source.splitlines()[-1].strip(): fix for fix in fixes}
    assert fixes[0] is by_source["return sum(values) / (sum(1 for v in values))"]
    kept = by_source["return sum(values) / (sum(1 for v in values[1:]) + 1)"]
    assert fixes.index(kept) > 0 and "raises where it returned" not in fixes[0].note
    # They disagree on [] and the tests cannot tell: by default the engine offers neither.
    engine = Engine()
    assert list(engine.propose(request_for(mean_counted, checks))) == []
    assert engine.ambiguity is not None and "[]" in engine.ambiguity.inputs
    assert engine.ambiguity.candidates[0].splitlines()[-1].strip() == "return sum(values) / (sum(1 for v in values))"


def test_ranking_order() -> None:
    def evidence(size: int, raised: int, agree: int, kept: bool = False) -> Evidence:
        return Evidence(Candidate("", "engine", edit_size=size), tier=1, order=size, agree=agree, compared=10,
                        raised=raised, kept=kept)

    raising, bigger, agreeing, small = evidence(1, 2, 9), evidence(3, 0, 5), evidence(1, 0, 9), evidence(1, 0, 4)
    keeping = evidence(1, 0, 10, kept=True)  # agrees more on passing inputs, but keeps the bug near the failing one
    assert sorted([raising, bigger, small, keeping, agreeing], key=Evidence.key) == [
        agreeing, small, keeping, bigger, raising]


def test_an_overrunning_worker_is_killed_and_replaced() -> None:
    with Worker({"sleep": lambda: time.sleep(30), "add": lambda a, b: a + b}) as worker:
        started = time.monotonic()
        assert worker.call("sleep", timeout=0.3) == ("timeout", None)
        assert time.monotonic() - started < 2
        assert worker.call("add", 2, 3, timeout=5) == ("ok", 5)
        assert worker.forks == 2
        status, message = worker.call("add", 2, "x", timeout=5)
        assert status == "error" and "TypeError" in message


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "pricing.py").write_text(textwrap.dedent("""
        def discount(price, percent):
            return price * (100 + percent) / 100
    """))
    (tmp_path / "check_pricing.py").write_text(textwrap.dedent("""
        import pytest
        from pricing import discount

        def test_zero():
            assert discount(50, 0) == 50

        @pytest.mark.parametrize(("price", "percent", "expected"), [(100, 10, 90), (80, 25, 60)])
        def test_table(price, percent, expected):
            assert discount(price, percent) == expected

        def test_with_fixture(tmp_path):
            assert tmp_path.exists() and discount(10, 50) == 5
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("pricing", None)
    sys.modules.pop("check_pricing", None)


def test_pytest_checks_run_collected_tests_and_fail_first_what_failed_last(project: Path) -> None:
    tests = PytestTests(["check_pricing.py"], rootdir=project)
    assert tests.collect() == ["check_pricing.py::test_zero", "check_pricing.py::test_table[100-10-90]",
                               "check_pricing.py::test_table[80-25-60]", "check_pricing.py::test_with_fixture"]
    assert [check.name for check in tests.split()] == tests.collect()
    target = Target.from_ref("pricing.py::discount")
    with pytest.raises(CheckFailed, match=r"test_table\[100-10-90\] failed: assert 110\.0 == 90"):
        tests(target.func)
    # Now test_zero fails too, but the test that failed last runs first and is the one reported.
    target.install(target.compile("def discount(price, percent):\n    return 0\n"))
    try:
        with pytest.raises(CheckFailed, match=r"test_table\[100-10-90\] failed: assert 0 == 90"):
            tests(target.func)
    finally:
        target.restore()


def test_session_with_the_engine_heals_against_pytest_tests(project: Path) -> None:
    target = Target.from_ref("pricing.py::discount")
    tests = PytestTests(["check_pricing.py"], rootdir=project)
    failure = check_failure("test", target.func, "test_zero failed")
    result = Session(target, failure, [tests], [Engine()]).run(install=False)
    assert result.ok and result.fix is not None
    assert "return price * (100 - percent) / 100" in result.fix.source
    assert result.candidates == 1  # the engine validated; the session proved its best candidate once


def test_the_engine_judges_failing_tests_first_then_the_rest_in_their_order(project: Path) -> None:
    (project / "check_pricing.py").write_text(textwrap.dedent("""
        import time
        from pricing import discount

        def test_slow_but_passing():
            time.sleep(0.05)  # an exponential original's expensive test, say
            assert discount(0, 10) == 0

        def test_fast_passing():
            assert discount(0, 0) == 0

        def test_failing():
            assert discount(100, 10) == 90
    """))
    target = Target.from_ref("pricing.py::discount")
    tests = PytestTests(["check_pricing.py"], rootdir=project)
    ids = tests.collect()
    failure = check_failure("test", target.func, "test_failing failed")
    fixes = list(Engine(jobs=1).propose(Request(target, failure, [], [tests], 1, time.monotonic() + 60)))
    assert fixes and "100 - percent" in fixes[0].source
    # the order every candidate was judged in: the failing test, then the others in the suite's order
    # (not by speed: a suite may pass only in its own order)
    assert tests._order == [ids[2], ids[0], ids[1]]


def test_prefer_puts_unknown_tests_last_in_their_order(project: Path) -> None:
    tests = PytestTests(["check_pricing.py"], rootdir=project)
    ids = tests.collect()
    tests.prefer({ids[3]: -1.0, ids[1]: 0.5})
    assert tests._order == [ids[3], ids[1], ids[0], ids[2]]



def test_the_inputs_compared_are_bounded_as_docs_engine_md_says() -> None:
    """docs/engine.md: at most 80 inputs from the passing checks; from the failing ones at most 80 calls, 80 small
    variations and 80 wide ones (however many a worker's "vary" job makes and the checks recorded)."""
    import types as _types

    from regrow._checks._inputs import Call, vary_job
    from regrow._proposers._engine._rank import failing_inputs, guard_inputs

    def sealed(tag: str, count: int) -> list[Any]:
        return [Call((f"{tag}{n}",), {}).seal() for n in range(count)]

    class Varying:  # a worker that runs the real "vary" job in this process (300 calls vary in thousands of ways)
        def call(self, job: str, given: Any, limit: int, with_texts: bool = False, wide: bool = False,
                 *, timeout: float, read: Any) -> tuple[str, Any]:
            assert job == "vary"
            return "ok", read(vary_job(given, limit, with_texts, wide))

    runs = [_types.SimpleNamespace(calls=sealed("passing", 300), passed=True),
            _types.SimpleNamespace(calls=sealed("failing", 300), passed=False)]
    spectrum = _types.SimpleNamespace(calls=lambda passing_only=False: [c for r in runs if r.passed or not passing_only
                                                                        for c in r.calls],
                                      failing=[runs[1]])
    passing, given = guard_inputs(spectrum, Varying())  # type: ignore[arg-type]
    assert len(passing) == 80 and given == 80
    failed, nearby, wide = failing_inputs(spectrum, Varying(), passing)  # type: ignore[arg-type]
    assert (len(failed), len(nearby), len(wide)) == (80, 80, 80)
    assert not {call.key for call in nearby} & {call.key for call in wide}  # none compared twice

"""The original's verdicts reused: a check that passed without reaching the statement an edit changes is
not run again for that candidate (it behaves there exactly as the original did)."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from regrow._checks._oracles import CheckFailed, PytestTests, TestCallable, known_to_pass
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._engine._plan import Plan
from regrow._proposers._proposer import Request
from regrow._target._target import Target


def sign(n: int) -> str:
    if n < 0:
        return "negative"
    if n == 0:
        return "zero"
    return "small" if n < 10 else "big"  # the bug: should be n <= 10


def check_negative(fn: Callable[[int], str]) -> None:
    assert fn(-3) == "negative"


def check_zero(fn: Callable[[int], str]) -> None:
    assert fn(0) == "zero"


def check_ten(fn: Callable[[int], str]) -> None:
    assert fn(10) == "small"


def check_big(fn: Callable[[int], str]) -> None:
    assert fn(11) == "big"


def checks() -> list[TestCallable]:
    return [TestCallable(test) for test in (check_negative, check_zero, check_ten, check_big)]


def request(func: Callable[..., Any], tests: list[Any]) -> Request:
    target = Target.of(func)
    return Request(target, check_failure("test", target.func, "failing"), [], tests, 1, time.monotonic() + 60)


def planned(engine: Engine, req: Request) -> Plan:
    with engine._worker(req) as worker:
        return engine.plan(req, worker)


def test_a_passing_check_that_never_runs_the_edited_statement_is_not_run_again() -> None:
    plan = planned(Engine(), request(sign, checks()))
    by_line: dict[int, frozenset[str]] = {}
    for edit in plan.edits:
        by_line.setdefault(edit.site.line, plan.unreached(edit))
    assert by_line[2] == frozenset()  # every check runs `if n < 0`
    assert by_line[3] == {"test:check_zero", "test:check_big"}  # only check_negative returns there
    assert by_line[6] == {"test:check_negative", "test:check_zero"}  # the last line: never for those two
    assert all("test:check_ten" not in unrun for unrun in by_line.values())  # a check that failed always runs


def test_nothing_is_reused_for_a_fresh_engine_or_when_asked_not_to() -> None:
    for engine in (Engine(fresh=True), Engine(reuse=False)):
        plan = planned(engine, request(sign, checks()))
        assert not plan.reuse and all(not plan.unreached(edit) for edit in plan.edits)


def test_the_same_fixes_with_and_without_reuse() -> None:
    runs = []
    for reuse in (True, False):
        engine = Engine(reuse=reuse, jobs=1, abstain=False)  # the fixes it would offer, even where they disagree
        fixes = [fix.source for fix in engine.propose(request(sign, checks()))]
        runs.append((fixes, engine.last_stats.evaluated, engine.last_stats.first))
    assert runs[0] == runs[1]
    assert "n <= 10" in runs[0][0][0]


def test_a_test_known_to_pass_counts_as_passed_unrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "loud.py").write_text("def loud(s):\n    return s.upper()\n")
    (tmp_path / "test_loud.py").write_text(textwrap.dedent("""
        from loud import loud

        def test_upper():
            assert loud("a") == "A"

        def test_broken_if_run():
            raise AssertionError("ran")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import loud

    tests = PytestTests([str(tmp_path / "test_loud.py")], rootdir=tmp_path)
    with pytest.raises(CheckFailed, match="ran"):
        tests(loud.loud)
    broken = next(nodeid for nodeid in tests.collect() if nodeid.endswith("test_broken_if_run"))
    with known_to_pass({broken}):
        tests(loud.loud)  # passes: the broken test is not run
    with known_to_pass(set(tests.collect())), known_to_pass(set()), pytest.raises(CheckFailed, match="ran"):
        tests(loud.loud)  # the innermost holds


def within(value: int, low: int, high: int) -> bool:
    """Whether ``low <= value <= high``."""
    return value > low and value < high  # the bug: two comparisons, both should include their bound


def check_inside(fn: Callable[..., bool]) -> None:
    assert fn(5, 1, 9)


def check_outside(fn: Callable[..., bool]) -> None:
    assert not fn(0, 1, 9) and not fn(10, 1, 9)


def check_low_edge(fn: Callable[..., bool]) -> None:
    assert fn(1, 1, 9)


def check_high_edge(fn: Callable[..., bool]) -> None:
    assert fn(9, 1, 9)


def test_a_statement_put_beside_one_runs_whenever_the_code_next_to_it_does() -> None:
    # A statement inserted after the docstring runs on every call, but the docstring itself is no line
    # the tracer reports: counting only its lines, every passing check looked unreached, an inserted
    # `if value == low or ...: return True` passed on the failing checks alone, and the engine offered
    # three candidates the session's proof then refused (engine2's `within`, fixed only by a pair).
    tests = [TestCallable(test) for test in (check_inside, check_outside, check_low_edge, check_high_edge)]
    plan = planned(Engine(), request(within, tests))
    inserts = [edit for edit in plan.edits if type(edit.new).__name__ == "Insert"]
    assert inserts and all(plan.unreached(edit) == frozenset() for edit in inserts)
    runs = []
    for reuse in (True, False):
        engine = Engine(reuse=reuse, jobs=1)
        runs.append([fix.source for fix in engine.propose(request(within, tests))])
    assert runs[0] == runs[1]
    assert runs[0] and "value >= low and value <= high" in runs[0][0]

"""Checks judged where they really run: pytest node ids inside the fork sandbox."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from regrow._checks._evaluate import evaluate
from regrow._sandbox import ForkSandbox, Limits
from regrow.extend import PytestTests, Target, Verdict

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork sandbox's guards are Linux's")

MODULE = "def total(values):\n    return sum(values) + 1\n"
TESTS = '''\
from sums import total


def test_total(tmp_path):
    (tmp_path / "numbers.txt").write_text("1 2 3")
    numbers = [int(n) for n in (tmp_path / "numbers.txt").read_text().split()]
    assert total(numbers) == 6
'''


def test_pytest_checks_with_tmp_path_run_in_the_fork_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "sums.py").write_text(MODULE)
    (tmp_path / "test_sums.py").write_text(TESTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    target = Target.from_ref("sums.py::total")
    tests = PytestTests(["test_sums.py"])
    tests.collect()
    sandbox = ForkSandbox(Limits(timeout=20))
    try:
        good = Verdict.from_outcome(sandbox.call(evaluate, target, "def total(values):\n    return sum(values)\n",
                                                 [tests]))
        bad = Verdict.from_outcome(sandbox.call(evaluate, target, MODULE, [tests]))
    finally:
        sandbox.close()
        sys.modules.pop("sums", None)
    assert good.ok, good.reason
    assert not bad.ok and "assert 7 == 6" in bad.reason
    assert target.func([1, 2, 3]) == 7  # the host's function is untouched by what the child ran


def test_an_order_a_time_limit_interrupted_is_made_whole_again(tmp_path, monkeypatch):
    """A time limit's interrupt between the reorder's remove and insert lost the test from the order: every later
    candidate judged in that worker failed with "no test of … ran" (5 of 10 runs of one heal found no fix so)."""
    from regrow._checks._oracles import CheckFailed

    (tmp_path / "sums_order.py").write_text(MODULE)
    (tmp_path / "test_sums_order.py").write_text(TESTS.replace("from sums import", "from sums_order import"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import sums_order as sums

        tests = PytestTests(["test_sums_order.py"])
        ids = tests.collect()
        tests._order = ids[1:]  # what the interrupted remove/insert left
        with pytest.raises(CheckFailed, match="assert 7 == 6"):
            tests(sums.total)  # every test runs again: the failure is the test's, not "no test ran"
        assert sorted(tests._order) == sorted(ids)
    finally:
        sys.modules.pop("sums_order", None)

"""unittest tests that need nothing of pytest are run as unittest runs them when only the verdict is
wanted: the same verdict and reason as pytest's protocol gives, setUp and tearDown run, and while
candidates are screened (failfast) the first failed subtest ends the test. Tests that need pytest keep
its protocol."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from regrow._checks._pytest_runner import Suite

TESTS = '''\
import unittest

import pytest

EVENTS = []


class Interrupt(BaseException):
    pass


class Plain(unittest.TestCase):
    def setUp(self):
        EVENTS.append("setUp")

    def tearDown(self):
        EVENTS.append("tearDown")

    def test_passes(self):
        self.assertEqual(1, 1)

    def test_fails(self):
        self.assertEqual(1, 2)

    def test_errors(self):
        raise KeyError("k")

    def test_subtests(self):
        for n in range(5):
            with self.subTest(n=n):
                EVENTS.append(f"sub{n}")
                self.assertLess(n, 2)

    def test_skipped(self):
        self.skipTest("not here")

    @unittest.skip("never")
    def test_skip_decorated(self):
        raise AssertionError("not run")

    @unittest.expectedFailure
    def test_expected(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected(self):
        pass

    def test_interrupted(self):
        raise Interrupt()


class WithClassSetup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.value = 1

    def test_reads(self):
        self.assertEqual(self.value, 1)


@pytest.mark.filterwarnings("error")
class Marked(unittest.TestCase):
    def test_marked(self):
        self.assertTrue(True)
'''

OUTCOMES = {"test_passes": (True, False), "test_fails": (False, False), "test_errors": (False, False),
            "test_subtests": (False, False), "test_skipped": (True, True), "test_skip_decorated": (True, True),
            "test_expected": (True, True), "test_unexpected": (False, False)}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "test_cases.py").write_text(TESTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    collected = Suite([str(tmp_path / "test_cases.py")], tmp_path)
    try:
        yield collected
    finally:
        collected.close()
        sys.modules.pop("test_cases", None)


def _node(suite: Suite, name: str) -> str:
    return next(nodeid for nodeid in suite.ids if nodeid.endswith("::" + name))


def test_only_tests_that_need_nothing_of_pytest_are_run_directly(suite: Suite) -> None:
    direct = {nodeid.rsplit("::", 1)[1] for nodeid in suite._unittest}
    assert direct == {*OUTCOMES, "test_interrupted"}  # not setUpClass's class, not the marked one


def test_each_verdict_and_reason_is_the_protocols(suite: Suite) -> None:
    for name, (passed, skipped) in OUTCOMES.items():
        nodeid = _node(suite, name)
        quick, protocol = suite.run(nodeid), suite._run_protocol(nodeid)
        assert (quick.passed, quick.skipped) == (passed, skipped) == (protocol.passed, protocol.skipped), name
        if name != "test_unexpected":  # pytest words an unexpected success its own way
            assert quick.reason == protocol.reason, name
    assert "(n=2) failed: AssertionError: 2 not less than 2" in suite.run(_node(suite, "test_subtests")).reason
    assert suite.run(_node(suite, "test_reads")).passed  # through the protocol: setUpClass ran
    assert suite.run(_node(suite, "test_marked")).passed


def test_setup_and_teardown_run_and_failfast_ends_the_test_at_its_first_failed_subtest(suite: Suite) -> None:
    events = sys.modules["test_cases"].EVENTS
    events.clear()
    assert not suite.run(_node(suite, "test_subtests"), failfast=True).passed
    assert events == ["setUp", "sub0", "sub1", "sub2", "tearDown"]  # sub3 and sub4 never ran
    events.clear()
    whole = suite.run(_node(suite, "test_subtests"))  # as localization runs it: every subtest
    assert events == ["setUp", "sub0", "sub1", "sub2", "sub3", "sub4", "tearDown"]
    assert "(n=2) failed" in whole.reason  # the first failure is the one reported


def test_a_time_limits_interrupt_is_not_taken_for_the_tests_error(suite: Suite) -> None:
    interrupt = sys.modules["test_cases"].Interrupt
    with pytest.raises(interrupt):
        suite.run(_node(suite, "test_interrupted"))
    assert not suite.run(_node(suite, "test_interrupted"), detail=True).passed  # the protocol reports it

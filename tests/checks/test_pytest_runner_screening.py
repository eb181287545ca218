"""A collected test run for a verdict (``detail=False``, as the engine screens candidates) gives the same
verdict, reason and place as one run for evidence, without pytest finding each frame's source for a
text nobody reads; the configuration's traceback style is left as it was."""

from __future__ import annotations

from pathlib import Path

from regrow._checks._pytest_runner import Suite

UNITTEST = '''\
import unittest


def helper(n):
    if n == 0:
        assert 1 == 2, "deep failure"
    return helper(n - 1)


class Numbers(unittest.TestCase):
    def test_fails(self):
        helper(3)

    def test_passes(self):
        self.assertEqual(1, 1)
'''


def test_a_verdict_run_reports_what_an_evidence_run_does_without_the_whole_text(tmp_path: Path) -> None:
    (tmp_path / "test_numbers.py").write_text(UNITTEST)
    suite = Suite([str(tmp_path / "test_numbers.py")], tmp_path)
    try:
        style = suite.config.option.tbstyle
        failing = next(nodeid for nodeid in suite.ids if nodeid.endswith("test_fails"))
        quick, full = suite.run(failing), suite.run(failing, detail=True)
        assert not quick.passed and not full.passed
        assert quick.reason == full.reason and "deep failure" in quick.reason
        assert quick.location == full.location == (str(tmp_path / "test_numbers.py"), 6)
        assert quick.detail == "" and "return helper(n - 1)" in full.detail  # the evidence has the source
        assert suite.config.option.tbstyle == style
        assert suite.run(next(nodeid for nodeid in suite.ids if nodeid.endswith("test_passes"))).passed
    finally:
        suite.close()

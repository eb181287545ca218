"""A suite whose tests trace themselves (``sys.settrace``, ``sys.setprofile``) is healable: the sandbox
refuses tracing only from a candidate's own code (issue 24)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regrow

BUGGY = '''\
def clamp(value, low, high):
    """Keep value inside [low, high]."""
    if value < low:
        return low
    if value > high:
        return low  # the bug: should return high
    return value
'''
TESTS = '''\
import sys

from shapes import clamp


def test_traced_lines():
    seen = []

    def tracer(frame, event, arg):
        if frame.f_code.co_name == "clamp" and event == "line":
            seen.append(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        high = clamp(11, 0, 10)
    finally:
        sys.settrace(previous)
    assert 6 in seen and high == 10


def test_profiled():
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(frame.f_code.co_name) if event == "call" else None)
    try:
        inside = clamp(5, 0, 10)
    finally:
        sys.setprofile(None)
    assert "clamp" in calls and inside == 5
'''


def test_regrow_heal_fixes_a_function_whose_tests_call_settrace(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    done = subprocess.run([sys.executable, "-m", "regrow", "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py",
                           "--apply", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused" not in done.stdout
    assert "        return high  # the bug" in (tmp_path / "shapes.py").read_text()


def clamp(value: int, low: int, high: int) -> int:
    if value < low:
        return low
    if value > high:
        return low  # the bug: should return high
    return value


def _traced(call: Callable[[], int]) -> tuple[int, list[int]]:
    seen: list[int] = []

    def tracer(frame: Any, event: str, arg: object) -> Any:
        if event == "line":
            seen.append(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return call(), seen
    finally:
        sys.settrace(previous)


def test_repair_fixes_a_function_whose_check_calls_settrace() -> None:
    original = clamp.__code__

    def check(fn: Callable[[int, int, int], int]) -> None:
        value, seen = _traced(lambda: fn(11, 0, 10))
        assert seen and value == 10

    try:
        result = regrow.repair(clamp, (11, 0, 10), tests=[check], max_candidates=400)
        assert result.ok, result.reason
        assert result.value == 10 and clamp(11, 0, 10) == 10 and clamp(-1, 0, 10) == 0
    finally:
        clamp.__code__ = original

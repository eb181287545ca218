"""``regrow heal --timeout`` is the whole command's: collecting the tests and running them on the original
come out of it, not only the search (issue 26: the command overran its --timeout by its fixed cost)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BUGGY = '''\
def clamp(value, low, high):
    if value > high:
        return low
    if value < low:
        return low
    return value
'''
TESTS = '''\
from shapes import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_above():
    assert clamp(11, 0, 10) == 10
'''
SLOW_COLLECTION = 4.0  # seconds the project's conftest takes to import


@pytest.fixture
def slow_project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("import os, sys, time\nsys.path.insert(0, os.path.dirname(__file__))\n"
                                          f"time.sleep({SLOW_COLLECTION})\n")
    return tmp_path


def regrow(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "regrow", "heal", "shapes.py::clamp", "--test", "tests", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=240)


def test_collecting_the_tests_comes_out_of_the_timeout(slow_project: Path) -> None:
    # Collection alone takes longer than the whole --timeout: nothing is left for the search.
    done = regrow(slow_project, "--timeout", str(SLOW_COLLECTION - 1), "--apply")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "time budget" in done.stdout, done.stdout
    assert (slow_project / "shapes.py").read_text() == BUGGY


def test_a_timeout_longer_than_collecting_leaves_the_search_the_rest(slow_project: Path) -> None:
    done = regrow(slow_project, "--timeout", "120", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "        return high\n" in (slow_project / "shapes.py").read_text()

"""`pytest --heal`: run as users run it, a pytest subprocess in a project folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODULE = '''\
def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return low
    return value
'''
TESTS = '''\
import pytest
from shapes import clamp


@pytest.mark.heal(target="shapes.clamp")
def test_above():
    assert clamp(11, 0, 10) == 10


@pytest.mark.heal(target="shapes.clamp")
def test_inside():
    assert clamp(5, 0, 10) == 5
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(MODULE)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    return tmp_path


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_without_heal_the_run_is_unchanged(project):
    done = pytest_run(project)
    assert done.returncode == 1
    assert "= regrow =" not in done.stdout and "fixed" not in done.stdout
    assert (project / "shapes.py").read_text() == MODULE


def test_heal_shows_the_fix_and_leaves_the_file(project):
    done = pytest_run(project, "--heal")
    assert done.returncode == 1  # the run's own result is not changed
    assert "shapes.clamp: fixed" in done.stdout
    assert "+        return high" in done.stdout
    assert (project / "shapes.py").read_text() == MODULE


def test_heal_apply_writes_the_fix(project):
    done = pytest_run(project, "--heal-apply")
    assert "shapes.clamp: fixed" in done.stdout
    assert "return high" in (project / "shapes.py").read_text()
    assert pytest_run(project).returncode == 0


def test_marker_is_registered(project):
    done = pytest_run(project, "--markers")
    assert "@pytest.mark.heal(target)" in done.stdout

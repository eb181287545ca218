"""`pytest --heal-apply` as users run it: interrupted with Ctrl-C, and with options of their own."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from released import interruptible
from test_pytest_plugin import ENV, MODULE, TESTS, pytest_run

SLOW_GUARD = '''

def test_slow_guard():
    import pathlib, time
    pathlib.Path(__file__).with_name("guarding").touch()
    time.sleep(60)  # the user presses Ctrl-C while this runs
'''
# Loaded again by the repair's own process (``python -m regrow heal``): there, say so and take long.
REPAIR_IS_SLOW = '''\
import os, pathlib, sys, time
if sys.argv[0].endswith(os.path.join("regrow", "__main__.py")):
    pathlib.Path(__file__).with_name("repairing").touch()
    time.sleep(60)
'''


@pytest.fixture
def project_in_git(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(MODULE)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    (tmp_path / ".gitignore").write_text("__pycache__/\n.regrow/\n")
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def interrupted(cwd: Path, flag: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A pytest run stopped as a terminal's Ctrl-C stops it (SIGINT to its process group) once ``flag`` exists."""
    # (interruptible: a suite run as a background job, as CI runs it, starts its children with SIGINT ignored)
    child = subprocess.Popen([*interruptible("pytest"), "-p", "no:cacheprovider", *args], cwd=cwd, env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (cwd / flag).exists() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    assert (cwd / flag).exists(), "the run never got there"
    os.killpg(child.pid, signal.SIGINT)
    out, err = child.communicate(timeout=120)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def test_ctrl_c_during_the_tests_repairs_nothing_and_writes_nothing(tmp_path):
    (tmp_path / "shapes.py").write_text(MODULE)
    (tmp_path / "test_shapes.py").write_text(TESTS + SLOW_GUARD)
    done = interrupted(tmp_path, "guarding", "--heal-apply")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "regrow: the run was interrupted: nothing repaired, nothing written" in done.stdout
    assert "shapes.clamp: fixed" not in done.stdout
    assert (tmp_path / "shapes.py").read_text() == MODULE and not (tmp_path / ".regrow").exists()


def test_ctrl_c_during_the_repair_ends_in_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "shapes.py").write_text(MODULE)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(REPAIR_IS_SLOW)
    done = interrupted(tmp_path, "repairing", "--heal-apply")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "regrow: interrupted while repairing shapes.clamp: nothing written" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert (tmp_path / "shapes.py").read_text() == MODULE


OPTION_CONFTEST = '''\
import pytest


def pytest_addoption(parser):
    parser.addoption("--ceiling", default=None, help="the ceiling the tests clamp to")


@pytest.fixture
def ceiling(request):
    value = request.config.getoption("--ceiling")
    if value is None:
        pytest.fail("run with --ceiling N")
    return int(value)
'''
OPTION_TESTS = '''\
import pytest
from shapes import clamp


@pytest.mark.heal(target="shapes.clamp")
def test_above(ceiling):
    assert clamp(ceiling + 1, 0, ceiling) == ceiling


def test_inside(ceiling):
    assert clamp(5, 0, ceiling) == 5
'''


def test_the_repair_gets_the_options_the_run_was_given(tmp_path):
    (tmp_path / "shapes.py").write_text(MODULE)
    (tmp_path / "test_shapes.py").write_text(OPTION_TESTS)
    (tmp_path / "conftest.py").write_text(OPTION_CONFTEST)
    done = pytest_run(tmp_path, "-q", "--ceiling", "10", "--heal-apply", "-k", "above or inside", "test_shapes.py")
    assert "shapes.clamp: fixed, proven against 2 tests" in done.stdout, done.stdout
    assert "return high" in (tmp_path / "shapes.py").read_text()
    assert pytest_run(tmp_path, "--ceiling=10").returncode == 0


def test_a_refused_write_names_heal_force(project_in_git):
    (project_in_git / "shapes.py").write_text(MODULE + "# my uncommitted work\n")
    done = pytest_run(project_in_git, "--heal-apply")
    assert "shapes.clamp: fixed, proven against 2 tests: 1 failing marked, 1 that passed before, but not kept" \
        in done.stdout, done.stdout
    assert "has uncommitted changes (M in git status) (--heal-force writes it anyway)" in done.stdout
    # In the order the repair printed it: the reason first, then the outcome that points "above" to it.
    assert done.stdout.index("(--heal-force writes it anyway)") < done.stdout.index("not kept (see above)")
    assert (project_in_git / "shapes.py").read_text() == MODULE + "# my uncommitted work\n"

"""Reasons that name the cause: what ``regrow heal`` and ``pytest --heal`` say when a test cannot prove a fix
(its fixture errors, it hangs, its file does not import), when the target hides under a decorator, and
when a mark names no target — each through the real command, a subprocess in a small project. Also:
the budgets follow the configuration unless an option is given, and line numbers are the file's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from released import interruptible
from test_cli_status import BUGGY, _env, one_line, regrow_run

TESTS = "import time\n\nimport pytest\n\nfrom shapes import clamp\n\n\ndef test_above():\n    " \
        "assert clamp(11, 0, 10) == 10\n"
FIXTURE = '''

@pytest.fixture
def database():
    raise RuntimeError("no database here")


def test_with_a_database(database):
    assert clamp(11, 0, 10) == 10


@pytest.fixture
def server():
    yield "http://localhost"
    raise OSError("the server did not stop")


def test_with_a_server(server):
    assert server
'''
HANGS = '''

def test_waits_forever():
    time.sleep(1000)
    assert clamp(11, 0, 10) == 10
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    return tmp_path


def heal(cwd: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "regrow", "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py",
                           *extra], cwd=cwd, capture_output=True, text=True, timeout=240, env={**_env(), **(env or {})})


def test_a_fixture_error_is_named_as_one_not_as_a_test_that_never_calls(project):
    (project / "tests" / "test_shapes.py").write_text(TESTS + FIXTURE)
    done = heal(project)
    assert done.returncode == 0, done.stdout + done.stderr  # healed against the test that does call it
    line = next(line for line in done.stdout.splitlines() if "test_with_a_database" in line)
    assert "errors in its fixture setup (RuntimeError: no database here)" in line, line
    assert "fix the fixture" in line and "never calls" not in line
    line = next(line for line in done.stdout.splitlines() if "test_with_a_server" in line)
    assert "errors in its fixture teardown (OSError: the server did not stop)" in line, line


def test_a_test_that_does_not_finish_is_named_as_one(project):
    (project / "tests" / "test_shapes.py").write_text(TESTS + HANGS)
    done = heal(project, "--candidate-timeout", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "test_waits_forever" in line)
    assert "did not finish in 2s on the original code, before it called shapes.clamp" in line, line
    assert "never calls" not in line


def test_a_collection_error_names_its_cause(project):
    (project / "tests" / "test_broken.py").write_text("from shapes import missing\n\n\ndef test_x():\n    pass\n")
    done = heal(project, "--test", "tests/test_broken.py::test_x")
    assert done.returncode == 2
    line = one_line(done)
    assert "collection error in tests/test_broken.py" in line and "cannot import name 'missing'" in line, line
    assert "found no collectors" not in line


def test_a_decorator_without_wraps_says_to_add_functools_wraps(project):
    (project / "shapes.py").write_text("def logged(fn):\n    def wrapper(*args, **kwargs):\n"
                                       "        return fn(*args, **kwargs)\n    return wrapper\n\n\n@logged\n" + BUGGY)
    done = heal(project)
    assert done.returncode == 2
    line = one_line(done)
    assert "shapes.clamp is under the decorator shapes.logged" in line, line
    assert "add @functools.wraps(fn) above `def wrapper` in logged" in line
    assert "move it to module or class level" not in line


def test_a_heal_mark_without_a_target_is_a_usage_error(project):
    (project / "tests" / "test_shapes.py").write_text(
        "import pytest\n\nfrom shapes import clamp\n\n\n@pytest.mark.heal\ndef test_above():\n"
        "    assert clamp(11, 0, 10) == 10\n")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    asked = subprocess.run([*command, "--heal"], cwd=project, capture_output=True, text=True, timeout=240,
                           env=_env())
    assert asked.returncode == 4, asked.stdout + asked.stderr  # pytest's usage error
    assert "@pytest.mark.heal needs the function the test exercises" in asked.stderr
    assert "tests/test_shapes.py::test_above" in asked.stderr and "Traceback" not in asked.stderr
    plain = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=240, env=_env())
    assert plain.returncode == 1  # without --heal the run is pytest's own: the test just fails
    assert (project / "shapes.py").read_text() == BUGGY


def test_history_counts_every_candidate_judged(project):
    store = project / "ledger.sqlite"
    done = heal(project, "--store", str(store))
    assert done.returncode == 0, done.stderr
    judged = int(next(line for line in done.stdout.splitlines() if line.strip().startswith("candidates")).split()[1])
    assert judged > 1  # the engine screened some before the one it offered
    listed = regrow_run(project, "history", "--store", str(store), "--json")
    assert json.loads(listed.stdout)[0]["candidates"] == judged
    from regrow._cli._agent import history  # what the MCP history tool returns

    assert history(store)["sessions"][0]["candidates"] == judged


def _stopped(done: subprocess.CompletedProcess[str]) -> str:
    return next(line for line in done.stdout.splitlines() if line.strip().startswith("stopped"))


@pytest.mark.parametrize(("file", "environ", "flag", "spent"), [
    (None, None, None, None),  # the command's default: 2000, the fix is found
    (3, None, None, 3),  # the file
    (3, 2, None, 2),  # the environment over the file
    (3, 2, 4, 4),  # the option over both
])
def test_the_budget_is_the_option_then_the_environment_then_the_file(project, file, environ, flag, spent):
    # The bug is not one the engine's first few candidates fix: a small budget is spent first.
    if file is not None:
        (project / "pyproject.toml").write_text(f"[tool.regrow]\nmax_candidates = {file}\n")
    env = {"REGROW_MAX_CANDIDATES": str(environ)} if environ is not None else {}
    done = heal(project, *(["--max-candidates", str(flag)] if flag is not None else []), env=env)
    if spent is None:
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"candidate budget of {spent} spent" in _stopped(done)


def test_a_bad_configured_budget_is_bad_input(project):
    (project / "pyproject.toml").write_text("[tool.regrow]\ntimeout = -1\n")
    done = heal(project)
    assert done.returncode == 2
    assert "timeout: must be a number of seconds greater than 0, not -1" in one_line(done)


def test_the_one_line_result_gives_the_files_line(project):
    (project / "shapes.py").write_text('"""Shapes."""\n\nSIDES = 4\n\n' + BUGGY)  # `return low` is line 9
    done = heal(project)
    assert done.returncode == 0, done.stderr
    fixed = next(line for line in done.stdout.splitlines() if line.startswith("regrow: fixed by "))
    assert " at shapes.py:9 " in fixed and "at line" not in fixed, fixed



def test_a_broken_bench_task_is_bad_input_with_its_reason(project, tmp_path):
    (project / "manifest.toml").write_text('[suite]\nname = "broken"\nroot = "."\n\n[[task]]\nname = "nothing"\n'
                                           'target = "shapes.py::missing"\ntests = ["tests/test_shapes.py"]\n')
    done = regrow_run(project, "bench", "manifest.toml", "--jobs", "1", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nothing: bad-target: shapes has no 'missing'" in one_line(done)
    assert "None" not in done.stdout  # nothing measured is "n/a", never "None%" or "None/s"
    assert "None" not in (tmp_path / "out" / "report.html").read_text()


def test_ctrl_c_while_a_test_of_the_original_hangs_ends_the_heal(project):
    # The test's own failure must not swallow the interrupt (the heal went on and "fixed" the function).
    started = project / "started"
    (project / "tests" / "test_shapes.py").write_text(
        TESTS + HANGS.replace("time.sleep", f"open({str(started)!r}, 'w').close()\n    time.sleep"))
    process = subprocess.Popen([*interruptible("regrow"), "heal", "shapes.py::clamp", "--test",
                                "tests/test_shapes.py", "--apply", "--candidate-timeout", "200"], cwd=project,
                               env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert started.exists()  # the hanging test runs on the original now
        os.killpg(process.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the whole group
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, (out, err)
    assert err.strip() == ("regrow: interrupted while running tests/test_shapes.py::test_waits_forever on the "
                           "original code; no file was changed"), err
    assert "fixed" not in out and (project / "shapes.py").read_text() == BUGGY

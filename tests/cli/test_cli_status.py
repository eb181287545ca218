"""Every exit status the README documents, kept when the tests misbehave or the input is bad, and never
a traceback: ``regrow`` run as users run it, a subprocess in a project folder."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from released import interruptible

import regrow

SRC = str(Path(regrow.__file__).parent.parent)  # this checkout's regrow, whatever the subprocess's cwd
BUGGY = '''\
def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return low  # the bug: should return high
    return value
'''
TESTS = '''\
import os
from shapes import clamp


def test_above():
    assert clamp(11, 0, 10) == 10
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(BUGGY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shapes.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    return tmp_path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def regrow_run(cwd: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m regrow ARGS``; with ``prelude``, that Python runs first in the same interpreter."""
    command = [sys.executable, "-m", "regrow", *args] if not prelude else [
        sys.executable, "-c", f"{prelude}\nimport runpy, sys\nsys.argv = ['regrow', *sys.argv[1:]]\n"
        "runpy.run_module('regrow', run_name='__main__')", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=240, env=_env())


def heal(cwd: Path, *extra: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    return regrow_run(cwd, "heal", "shapes.py::clamp", "--test", "tests/test_shapes.py", *extra, prelude=prelude)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("code", [0, 3])
def test_a_test_that_calls_os_exit_does_not_end_regrow_or_decide_its_status(project, code):
    (project / "tests" / "test_shapes.py").write_text(TESTS + f"\n\ndef test_exits():\n    os._exit({code})\n")
    done = heal(project)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = one_line(done)
    assert f"ended the interpreter with status {code} while running tests/test_shapes.py::test_exits" in line
    assert (project / "shapes.py").read_text() == BUGGY


def test_a_test_that_segfaults_is_reported_not_fatal(project):
    (project / "tests" / "test_shapes.py").write_text(
        TESTS + "\n\ndef test_crashes():\n    import ctypes\n    ctypes.string_at(0)\n")
    done = heal(project)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "ended the interpreter by signal SIGSEGV" in one_line(done)


def test_a_test_that_exits_on_a_candidate_costs_only_that_candidate(project):
    # The original fails this test; a candidate that returns the value unclamped (the engine tries one
    # before the fix) makes it call os._exit(0): that candidate's worker dies, and the search goes on.
    (project / "tests" / "test_shapes.py").write_text(
        "import os\nfrom shapes import clamp\n\n\ndef test_above():\n    got = clamp(11, 0, 10)\n"
        "    if got == 11:\n        os._exit(0)\n    assert got == 10\n")
    done = heal(project, "-v")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "exited with status 0" in done.stdout and "+        return high" in done.stdout


def test_a_closed_output_is_not_a_traceback(project):
    process = subprocess.Popen([sys.executable, "-m", "regrow", "heal", "shapes.py::clamp", "--test",
                                "tests/test_shapes.py", "-v"], cwd=project, env=_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # what ``| head -1`` does
    err = process.stderr.read()
    process.wait(timeout=120)
    process.stderr.close()
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("option", ["--apply", "--patch", "--pr"])
def test_a_missing_extra_is_one_line_before_any_work(project, tmp_path, option):
    args = [option, str(tmp_path / "patches")] if option == "--patch" else [option]
    done = heal(project, *args, prelude="import sys; sys.modules['libcst'] = None")
    assert done.returncode == 2
    assert "needs libcst: pip install 'regrow[delivery]'" in one_line(done)
    assert "healing" not in done.stdout  # nothing was collected or run


def test_an_unknown_provider_is_one_line_before_the_tests_run(project):
    done = heal(project, "--model", "opneai:gpt-5")
    assert done.returncode == 2
    assert "unknown provider 'opneai'" in one_line(done)
    assert done.stdout == ""


def test_a_missing_sdk_names_its_extra(project):
    done = heal(project, "--model", "anthropic:claude", prelude="import sys; sys.modules['anthropic'] = None")
    assert done.returncode == 2
    assert "pip install 'regrow[anthropic]'" in one_line(done)


def test_patch_into_an_existing_file_is_one_line(project):
    done = heal(project, "--patch", "shapes.py")
    assert done.returncode == 2
    assert "--patch takes a folder, and shapes.py is a file" in one_line(done)
    assert (project / "shapes.py").read_text() == BUGGY


def test_deliver_without_an_action_is_bad_input(project):
    (project / "out").mkdir()
    done = regrow_run(project, "deliver", "out")
    assert done.returncode == 2
    assert "needs something to do" in one_line(done)


SLOW_TESTS = '''\
import time
from shapes import clamp


def test_above():
    time.sleep(2.0)  # each run of it, on the original and on every candidate: the heal outlasts the interrupt
    assert clamp(11, 0, 10) == 10
'''


@pytest.mark.parametrize("sent", ["group", "process"])
def test_ctrl_c_ends_cleanly_with_one_line_and_the_files_untouched(project, sent):
    """``process``: a ``kill -INT`` of regrow's own pid (``timeout -s INT``, a CI runner cancelling) was ignored, the
    heal ran on to its end: the heal runs in a child the parent now passes it on to."""
    (project / "tests" / "test_shapes.py").write_text(SLOW_TESTS)
    process = subprocess.Popen([*interruptible("regrow"), "heal", "shapes.py::clamp", "--test",
                                "tests/test_shapes.py", "--apply", "--log"], cwd=project, env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:  # wait until the search runs
            seen.append(line)
            if "searching" in line:
                break
        time.sleep(0.5)
        if sent == "group":
            os.killpg(process.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the whole group
        else:
            os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, (seen, out, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err and "no file was changed" in err, err
    # ... and it says what was judged so far, and in how long (the search was running)
    assert re.search(r"^regrow: interrupted after \d+ candidates in \d+\.\ds; no file was changed$", err.strip()), err
    assert (project / "shapes.py").read_text() == BUGGY
    assert not list(project.glob("*.regrow-backup"))


@pytest.mark.parametrize("option", [("--max-candidates", "0"), ("--timeout", "-1"), ("--candidate-timeout", "0"),
                                    ("--timeout", "nan")])
def test_a_budget_that_allows_no_search_is_bad_input_before_any_work(project, option):
    # Before, the tests ran and the heal ended "no fix" (exit 1) with a budget of 0 spent.
    (project / "tests" / "test_shapes.py").write_text(TESTS + "\n\nopen('ran', 'w').close()\n")
    done = heal(project, *option)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"argument {option[0]}: " in done.stderr and repr(option[1]) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (project / "ran").exists()  # nothing was collected or run


def test_history_limit_below_one_is_bad_input(project):
    done = regrow_run(project, "history", "--limit", "-1")
    assert done.returncode == 2 and "argument --limit: a whole number of at least 1, not '-1'" in done.stderr


def test_a_model_endpoint_that_refuses_is_one_line_not_a_traceback(project):
    import socket

    pytest.importorskip("openai")
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (project / "tests" / "test_shapes.py").write_text(
        "from shapes import clamp\n\n\ndef test_above():\n    assert clamp(11, 0, 10) == 'eleven'\n")
    prelude = (f"import os\nos.environ.update(OPENAI_API_KEY='sk-test', OPENAI_BASE_URL='http://127.0.0.1:{port}/v1')")
    done = heal(project, "--model", "openai:gpt-test", "--timeout", "60", prelude=prelude)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # before: ~110 lines of the SDK's connection traceback
    assert "proposer openai:gpt-test failed: " in done.stderr and len(done.stderr.splitlines()) <= 3, done.stderr


def test_a_fault_of_regrow_s_own_is_one_line_and_status_70(capfd):
    """Before, the heal's child ended with status 70 and nothing said (an unwritable --patch folder, a bug)."""
    from regrow._cli._guard import INTERNAL, guarded

    def broken() -> int:
        raise ValueError("the patch folder is a file")

    assert guarded(broken) == INTERNAL == 70
    err = capfd.readouterr().err
    assert err.strip() == ("regrow: internal error: ValueError: the patch folder is a file (a bug in regrow; "
                           "REGROW_DEBUG=1 shows where)"), err


def test_a_store_that_cannot_be_opened_is_bad_input_in_one_line(project, tmp_path):
    """Before: nothing said and status 70 (an unwritable SQLite path, a store a newer regrow migrated)."""
    done = heal(project, "--store", "/proc/no-such-folder/ledger.sqlite")
    assert done.returncode == 2, done.stdout + done.stderr
    assert one_line(done).startswith("regrow: error: cannot open the store at /proc/no-such-folder/ledger.sqlite")
    newer = tmp_path / "newer.db"
    import sqlite3

    from regrow._stores._sqlite import SQLiteStore

    SQLiteStore(newer).close()
    with contextlib.closing(sqlite3.connect(newer)) as connection, connection:  # (closed: 3.13 warns)
        connection.execute("INSERT INTO schema_version (version) VALUES (99)")
    done = heal(project, "--store", str(newer))
    assert done.returncode == 2 and "schema version 99, newer than this regrow's" in one_line(done)


def test_the_outcome_says_what_was_kept_not_what_was_asked(project, monkeypatch):
    """--apply wrote the file, --pr then failed: the outcome said "fixed, but not kept" (the file was written)."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    done = heal(project, "--apply", "--pr", "--repo", "acme/shop")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "fixed, written to the file, but not all of it was kept (see above)" in done.stdout, done.stdout
    assert "the fix was not proposed: no GitHub token" in done.stderr
    assert (project / "shapes.py").read_text() != BUGGY  # written, as the outcome now says

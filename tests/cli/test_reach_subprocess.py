"""Tests that run the code in a subprocess cannot see a candidate installed in this process.

regrow says so per test, proves the fix against the tests that call the target in this process,
and then runs the subprocess tests in a scratch copy of the tree with the fix written in.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from reach_projects import copy_project, pytest_run, regrow

from regrow._checks._probe import probe, watching
from regrow._checks._pytest_runner import Suite
from regrow.extend import Target

TARGET = "wordcount/__init__.py::count_words"
MODULE_LINE = ("regrow: tests/test_command.py::test_module_command runs the code in a subprocess "
               "(python -m wordcount 'one two three') and never calls wordcount.count_words in this process: "
               "it fails whatever candidate is installed here")
SCRIPT_LINE = ("regrow: tests/test_command.py::test_script_command runs the code in a subprocess "
               "(python wordcount/__init__.py just two) and never calls wordcount.count_words in this process")


def test_only_subprocess_tests_fail_says_why_no_fix_can_be_proven(tmp_path: Path) -> None:
    project = copy_project("subprocess_cli", tmp_path)
    done = regrow(project, "heal", TARGET, "--test", "tests/test_command.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert MODULE_LINE in done.stdout.splitlines(), done.stdout
    assert any(line.startswith(SCRIPT_LINE) for line in done.stdout.splitlines())
    assert "no failing test calls wordcount.count_words in this process" in done.stdout
    assert "candidates" not in done.stdout  # no search that could never end in a proof


def test_a_fix_is_proven_in_process_and_the_subprocess_tests_in_a_copy(tmp_path: Path) -> None:
    project = copy_project("subprocess_cli", tmp_path)
    done = regrow(project, "heal", TARGET, "--test", "tests", "--apply")
    assert done.returncode == 0, done.stdout + done.stderr
    assert MODULE_LINE in done.stdout.splitlines()
    assert "proving fixes against the 2 of 4 tests that call wordcount.count_words" in done.stdout
    assert ("regrow: the 2 tests that run the code in a subprocess pass in a scratch copy with the fix written in"
            in done.stdout)
    assert pytest_run(project).returncode == 0  # the subprocess tests too, now that the fix is written
    assert not list(project.rglob("regrow-copy-*"))


def test_a_fix_the_subprocess_tests_reject_in_the_copy_is_not_claimed(tmp_path: Path) -> None:
    project = copy_project("subprocess_cli", tmp_path)
    # The command prints more than the count: no fix of count_words makes this test pass.
    (project / "tests" / "test_banner.py").write_text(textwrap.dedent('''\
        import subprocess
        import sys
        from pathlib import Path


        def test_banner():
            done = subprocess.run([sys.executable, "-m", "wordcount", "a b"], cwd=Path(__file__).parent.parent,
                                  capture_output=True, text=True, check=False)
            assert done.stdout == "words: 2\\n"
    '''))
    before = (project / "wordcount" / "__init__.py").read_text()
    done = regrow(project, "heal", TARGET, "--test", "tests/test_api.py", "--test", "tests/test_banner.py",
                  "--apply")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "regrow: not fixed: with the fix written into a scratch copy" in done.stdout
    assert "tests/test_banner.py::test_banner" in done.stdout
    assert (project / "wordcount" / "__init__.py").read_text() == before  # nothing applied


def test_the_probe_tells_calls_subprocesses_and_forks_apart(tmp_path: Path, monkeypatch) -> None:
    project = copy_project("subprocess_cli", tmp_path)
    (project / "tests" / "test_fork.py").write_text(textwrap.dedent('''\
        import os

        from wordcount import count_words


        def test_in_a_fork():
            pid = os.fork()
            if pid == 0:
                os._exit(0 if count_words("a b") == 2 else 1)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 1  # the bug, seen in the child
    '''))
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    suite = Suite(["tests"], project)
    try:
        target = Target.from_ref(TARGET)
        seen = {reach.nodeid: reach for reach in probe(suite, target.original_code)}
    finally:
        suite.close()
        sys.modules.pop("wordcount", None)
    api = seen["tests/test_api.py::test_three_words"]
    assert api.calls and not api.blind and not api.started and not api.result.passed
    command = seen["tests/test_command.py::test_module_command"]
    assert command.blind and command.started == ("python -m wordcount 'one two three'",)
    fork = seen["tests/test_fork.py::test_in_a_fork"]
    assert fork.forked and not fork.blind  # a forked child runs whatever is installed here


def test_a_watch_restores_the_profile_function_and_sees_os_system() -> None:
    def mine(frame, event, arg):
        return None

    sys.setprofile(mine)
    try:
        with watching(test_a_watch_restores_the_profile_function_and_sees_os_system.__code__) as watch:
            os.system("true")
        assert sys.getprofile() is mine
    finally:
        sys.setprofile(None)
    assert watch.started == ["true"] and not watch.calls

"""A process that opened a pytest suite forks (a worker of a web server, a multiprocessing pool): the child's
exit runs the atexit handler that closes suites, and must leave its parent's suite alone (pytest's cleanups
would run twice, the second time in the child, on the parent's session: its temporary folders, its plugins)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = '''
import os


def pytest_sessionfinish(session):
    with open(os.environ["FINISHED"], "a") as log:
        log.write(f"{os.getpid()}\\n")
'''

PROCESS = '''
import os, sys
from regrow._checks._pytest_runner import open_suite

suite = open_suite([sys.argv[1] + "/test_one.py"], rootdir=None)
assert suite.run(suite.ids[0]).passed
child = os.fork()
if child == 0:
    sys.exit(0)  # a normal exit: atexit handlers run, regrow's among them
os.waitpid(child, 0)
print(child, os.getpid(), flush=True)
'''


def test_a_forked_child_leaves_the_suite_its_parent_opened_to_the_parent(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    (tmp_path / "process.py").write_text(textwrap.dedent(PROCESS))
    finished = tmp_path / "finished.log"
    src = str(Path(__file__).parents[2] / "src")
    done = subprocess.run([sys.executable, str(tmp_path / "process.py"), str(tmp_path)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": src, "FINISHED": str(finished)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    child, parent = done.stdout.split()
    assert child != parent
    assert finished.read_text().split() == [parent]  # finished once, by the process that opened it

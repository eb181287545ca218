"""``regrow.watch`` in a process forked after it started (a ``multiprocessing`` pool, a gunicorn worker forked from
a master that imported the app): the child repairs its own failures, and not its parent's queued ones. A real fork
of a real process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = str(Path(__file__).parents[2] / "src")
SHOP = '''
def parent_bug(x):
    return 1 / x


def child_bug(items):
    return items[0]
'''
MAIN = '''
import os, sys

import regrow



def take_first(fn):
    assert fn([]) is None
    assert fn([3]) == 3


sys.path.insert(0, sys.argv[1])
watcher = regrow.watch("forkshop", tests={"forkshop.child_bug": [take_first]}, cooldown=0)
import forkshop

try:
    forkshop.parent_bug(0)
except ZeroDivisionError:
    pass
assert watcher.drain(120)  # the parent's worker thread now waits for its next job
pid = os.fork()
if pid == 0:
    try:
        forkshop.child_bug([])
    except IndexError:
        pass
    drained = watcher.drain(60)
    jobs = {job.name: job.outcome for job in watcher.jobs}
    print("child", drained, jobs.get("forkshop.child_bug"), forkshop.child_bug([]), forkshop.child_bug([5]), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("parent", os.waitstatus_to_exitcode(status), [job.name for job in watcher.jobs], flush=True)
'''


def test_a_process_forked_after_watch_started_repairs_its_own_failures(tmp_path: Path) -> None:
    """Before: the child's first job went to the parent's waiting worker thread, which a fork does not copy; the
    child's own worker never woke and nothing was ever repaired there (its drain timed out)."""
    (tmp_path / "forkshop.py").write_text(textwrap.dedent(SHOP))
    (tmp_path / "main.py").write_text(textwrap.dedent(MAIN))
    done = subprocess.run([sys.executable, str(tmp_path / "main.py"), str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC}, timeout=600)
    assert done.returncode == 0, done.stderr
    child, parent = done.stdout.splitlines()[-2:]
    assert child == "child True installed None 5", (done.stdout, done.stderr)  # repaired there, and in effect
    assert parent == "parent 0 ['forkshop.parent_bug']", done.stdout  # the parent's own repairs only

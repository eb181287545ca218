"""Many processes opening one new SQLite store at once: switching a new file to WAL takes a lock SQLite
does not wait for ("database is locked" at once), so the switch is tried again within the wait; a process
must never die of it (it did: one of four watching processes, in a full test run)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from released import release_when_ready

from regrow._stores import _sqlite

SRC = str(Path(__file__).parents[2] / "src")
OPEN = '''
import sys, time
from pathlib import Path

from regrow import Store

folder = Path(sys.argv[1])
(folder / f"ready-{sys.argv[2]}").touch()
while not (folder / "go").exists():
    time.sleep(0.001)
Store(folder / "regrow.db").close()
print("opened", flush=True)
'''


class _Locked:
    """A connection whose first ``times`` WAL switches find the file locked, as a racing process leaves it."""

    def __init__(self, times: int, message: str = "database is locked") -> None:
        self.times, self.message, self.tries = times, message, 0

    def execute(self, sql: str) -> None:
        self.tries += 1
        if self.tries <= self.times:
            raise sqlite3.OperationalError(self.message)


def test_a_locked_switch_to_wal_is_tried_again() -> None:
    db = _Locked(3)
    _sqlite.wal(db, wait=5.0)  # type: ignore[arg-type]
    assert db.tries == 4


def test_a_lock_that_outlasts_the_wait_and_other_errors_are_raised() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _sqlite.wal(_Locked(10**9), wait=0.05)  # type: ignore[arg-type]
    other = _Locked(1, "disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk"):
        _sqlite.wal(other, wait=5.0)  # type: ignore[arg-type]
    assert other.tries == 1


@pytest.mark.parametrize("round_", range(3))
def test_eight_processes_open_one_new_store_at_once(tmp_path: Path, round_: int) -> None:
    (tmp_path / "open.py").write_text(textwrap.dedent(OPEN))
    env = {**os.environ, "PYTHONPATH": SRC}
    processes = [subprocess.Popen([sys.executable, str(tmp_path / "open.py"), str(tmp_path), str(n)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in range(8)]
    release_when_ready(tmp_path, processes)
    said = [process.communicate(timeout=120) for process in processes]
    assert [out.strip() for out, _ in said] == ["opened"] * 8, said


CLOSE_UNDER_QUERIES = """
import sqlite3, sys, threading
from regrow import Store

path = sys.argv[1]
odd = []
for _ in range(150):
    store = Store(path)
    store.sessions()
    started, stop = threading.Event(), threading.Event()

    def query():
        while not stop.is_set():
            try:
                store.landings(0)
                store.sessions()
            except sqlite3.ProgrammingError:  # its connection was closed between two queries: clear, no crash
                pass
            except Exception as exc:
                odd.append(repr(exc))
            started.set()

    thread = threading.Thread(target=query)
    thread.start()
    started.wait(10)
    store.close()  # from another thread than the one querying
    stop.set()
    thread.join(10)
print("odd", odd[:3])
"""


def test_a_store_closed_while_another_thread_queries_it_does_not_crash(tmp_path: Path) -> None:
    # The fleet listener's thread reads the store while a program (or a test's teardown) closes it: close()
    # waits for the query under way instead of freeing the connection under it (a segfault on 3.13).
    done = subprocess.run([sys.executable, "-c", CLOSE_UNDER_QUERIES, str(tmp_path / "store.db")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "odd []" in done.stdout, done.stdout

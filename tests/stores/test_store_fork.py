"""A store opened before a fork (a web server's workers forked after the app was imported, with its decorated
functions' store): each process uses connections of its own, at the same time, and neither ends the other's.
Real processes on a real SQLite file and a real PostgreSQL server, both backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from regrow import Store

SCRIPT = '''
import json, os, sys

from regrow import Store

store = Store(sys.argv[1])


def connection():
    """Which connection this process uses: the server's process for it, or the SQLite connection object."""
    if store.location.startswith("postgresql"):
        with store._transaction() as tx:
            return tx.rows("SELECT pg_backend_pid()")[0][0]
    return id(store._db())


def work(who, rounds):
    for i in range(rounds):
        store.submit({"target": f"shop::{who}", "fingerprint": f"{who}-{i}"})


before = connection()
read, write = os.pipe()
child = os.fork()
if child == 0:  # the worker: uses the store at once, beside the parent, then exits as a program does
    os.close(read)
    work("child", 60)
    os.write(write, json.dumps(connection()).encode())
    sys.exit(0)  # atexit handlers and finalizers run: none may close the parent's connection
os.close(write)
work("parent", 60)
_, status = os.waitpid(child, 0)
theirs = json.loads(os.read(read, 100))
idle = os.fork()
if idle == 0:  # a worker that never used the store exits: its finalizers must leave the parent's connections be
    sys.exit(0)
os.waitpid(idle, 0)
work("parent-after", 5)
print(json.dumps({"status": status, "before": before, "child": theirs, "after": connection()}))
'''


def test_a_store_opened_before_a_fork_gives_each_process_connections_of_its_own(store_url, tmp_path: Path) -> None:
    script = tmp_path / "fleet_worker.py"
    script.write_text(textwrap.dedent(SCRIPT))
    src = str(Path(__file__).parents[2] / "src")
    done = subprocess.run([sys.executable, str(script), store_url], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": src}, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["status"] == 0, done.stderr  # the worker's every call was answered
    # The worker had a connection of its own (on PostgreSQL, a server process of its own; on SQLite, whose
    # rule is that a connection never crosses a fork, a connection object of its own beside the parent's,
    # kept and unused), and the parent kept its own through the worker's exit, and through the exit of a
    # worker that never used the store.
    assert seen["child"] != seen["before"]
    assert seen["after"] == seen["before"]
    store = Store(store_url)
    try:
        targets = [job["target"] for job in store.jobs()]
    finally:
        store.close()
    # Nothing was lost or garbled: every call of both processes is in the store.
    assert sorted(set(targets)) == ["shop::child", "shop::parent", "shop::parent-after"]
    assert (targets.count("shop::child"), targets.count("shop::parent"), targets.count("shop::parent-after")) == (
        60, 60, 5)


BUSY = '''
import os, signal, sys, threading

from regrow import Store

store = Store(sys.argv[1])
stopping = threading.Event()


def poll():  # what a fleet listener does, every 0.1 s; here without a pause, so forks land inside its calls
    while not stopping.is_set():
        store.landings(0)


threads = [threading.Thread(target=poll, daemon=True) for _ in range(3)]
for thread in threads:
    thread.start()
hung = []
for _ in range(int(sys.argv[2])):
    child = os.fork()
    if child == 0:  # a worker: its first store call must be answered
        signal.alarm(20)
        Store(sys.argv[1]).landings(0)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    if status:
        hung.append(status)
stopping.set()
print("hung", len(hung), hung[:3])
'''


def test_a_fork_made_while_other_threads_are_inside_sqlite_calls_leaves_the_child_a_working_sqlite(
        tmp_path: Path) -> None:
    """SQLite's process-wide mutexes are held by a thread inside a call: a fork landing there left the child's
    first SQLite call hung for good (9 children of 300 before the fork gate). Each fork now waits for regrow's
    SQLite calls in flight."""
    script = tmp_path / "busy.py"
    script.write_text(textwrap.dedent(BUSY))
    src = str(Path(__file__).parents[2] / "src")
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "regrow.db"), "300"], cwd=tmp_path,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": src}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["hung", "0"], done.stdout

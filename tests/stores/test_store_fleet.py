"""The store for a fleet, over both backends: schema versions, single-flight claims and jobs, with
real processes racing and real processes killed -9 (``store_url``: SQLite and PostgreSQL)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from regrow import Store
from regrow._store import PostgresStore, SQLiteStore, StoreError
from regrow._stores._schema import VERSION

PYTHON_PATH = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "src"),
                                                            os.environ.get("PYTHONPATH", "")])}


def _script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _until(condition, timeout: float = 120.0):
    """Poll ``condition`` until it is true (a generous timeout: never a test of speed)."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)
    return found


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    yield opened
    opened.close()


def test_the_url_picks_the_backend(store, store_url):
    assert isinstance(store, PostgresStore if store_url.startswith("postgresql://") else SQLiteStore)
    assert isinstance(store, Store) and store.schema_version() == VERSION


def test_a_store_from_a_newer_regrow_is_refused_with_a_clear_error(store, store_url):
    with store._transaction() as tx:
        tx.change("INSERT INTO schema_version (version) VALUES (99)")
    with pytest.raises(StoreError, match=f"schema version 99, newer than this regrow's {VERSION}"):
        Store(store_url)


def test_an_old_sqlite_file_is_adopted_and_migrated(tmp_path):
    db = tmp_path / "old.db"
    with contextlib.closing(sqlite3.connect(db)) as old:  # the store as regrow wrote it before schema versions
        old.executescript("""
            CREATE TABLE fixes (key TEXT PRIMARY KEY, qualname TEXT NOT NULL, fingerprint TEXT NOT NULL,
                source TEXT NOT NULL, origin TEXT NOT NULL, operator TEXT NOT NULL, created REAL NOT NULL,
                hits INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, qualname TEXT NOT NULL,
                fingerprint TEXT NOT NULL, ok INTEGER NOT NULL, reason TEXT NOT NULL, candidates INTEGER NOT NULL,
                duration REAL NOT NULL, fix TEXT, created REAL NOT NULL);
            INSERT INTO sessions (qualname, fingerprint, ok, reason, candidates, duration, fix, created)
                VALUES ('f', 'fp', 1, 'old', 1, 0.5, 'def f(): pass', 1.0);
            INSERT INTO fixes VALUES ('k', 'f', 'fp', 'def f(): pass', 'engine', 'op', 1.0, 0);
        """)
        old.commit()
    old.close()
    store = Store(db)
    assert store.schema_version() == VERSION
    assert [(row["reason"], row["host"]) for row in store.sessions()] == [("old", "")]
    assert store.lookup("k").source == "def f(): pass"
    store.close()


def test_an_unknown_scheme_and_an_unreachable_server_are_clear_errors():
    with pytest.raises(StoreError, match="no store backend for mysql://"):
        Store("mysql://somewhere/db")
    with pytest.raises(StoreError, match="cannot reach the store at") as caught:
        Store("postgresql://regrow:hunter2@127.0.0.1:1/none", connect_timeout=2)
    assert "hunter2" not in str(caught.value) and "regrow:***@" in str(caught.value)


def test_a_claim_is_one_holders_until_released_or_its_lease_ends(store):
    assert store.claim("fp", "a", 60) and store.holder("fp") == "a"
    assert not store.claim("fp", "b", 60)
    assert store.claim("fp", "a", 60)  # the holder renews its own claim
    assert not store.release("fp", "b") and store.release("fp", "a")
    assert store.holder("fp") is None and store.claim("fp", "b", 60)
    assert store.claim("other", "a", -1)  # a lease that has already ended
    assert store.holder("other") is None and store.claim("other", "c", 60)


CLAIMER = '''
import sys, time, pathlib
from regrow import Store
store = Store(sys.argv[1])
print("ready", flush=True)
go = pathlib.Path(sys.argv[3])
while not go.exists():
    time.sleep(0.002)
print("won" if store.claim("the-bug", sys.argv[2], 60) else "lost", flush=True)
store.close()
'''


def test_of_eight_processes_claiming_at_once_exactly_one_wins(store, store_url, tmp_path):
    script, go = _script(tmp_path, "claimer.py", CLAIMER), tmp_path / "go"
    claimers = [subprocess.Popen([sys.executable, str(script), store_url, f"p{n}", str(go)], env=PYTHON_PATH,
                                 stdout=subprocess.PIPE, text=True) for n in range(8)]
    assert [c.stdout.readline().strip() for c in claimers] == ["ready"] * 8
    go.touch()  # all eight are open and waiting: they claim at once
    said = [c.communicate(timeout=120)[0].strip() for c in claimers]
    assert sorted(said) == ["lost"] * 7 + ["won"]
    assert store.holder("the-bug") == f"p{said.index('won')}"


HOLDER = '''
import sys, time
from regrow import Store
store = Store(sys.argv[1])
print("claimed" if store.claim("the-bug", "doomed", float(sys.argv[2])) else "refused", flush=True)
time.sleep(600)
'''


def test_a_holder_killed_9_loses_its_claim_when_the_lease_ends(store, store_url, tmp_path):
    script = _script(tmp_path, "holder.py", HOLDER)
    holder = subprocess.Popen([sys.executable, str(script), store_url, "2"], env=PYTHON_PATH,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "claimed"
    expires = store.claims()[0]["expires"]
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    holder.stdout.close()
    _until(lambda: store.claim("the-bug", "survivor", 60))
    (claim,) = store.claims()
    assert claim["holder"] == "survivor" and claim["claimed"] >= expires  # not a moment before the lease ended


def _capture(n: int) -> dict[str, object]:
    return {"target": "mod::f", "fingerprint": f"fp{n % 3}", "args": [n]}


def test_a_job_is_taken_by_one_worker_and_done_once(store):
    first, second = store.submit(_capture(1)), store.submit(_capture(2))
    job = store.take("w1", 60)
    assert job is not None and (job.id, job.capture, job.attempts) == (first, _capture(1), 1)
    assert store.take("w2", 60).id == second and store.take("w3", 60) is None
    assert store.finish(job, {"ok": True}) and not store.finish(job, {"ok": False})
    assert [(row["id"], row["state"], row["result"]) for row in store.jobs()] == [
        (first, "done", {"ok": True}), (second, "taken", None)]


def test_a_job_whose_lease_ended_goes_to_another_worker_and_the_first_cannot_finish_it(store):
    store.submit(_capture(1))
    lapsed = store.take("w1", -1)  # w1's lease has ended (its worker died or stalled)
    again = _until(lambda: store.take("w2", 60))
    assert again.id == lapsed.id and again.attempts == 2
    assert not store.finish(lapsed, {"by": "w1"}) and not store.renew(lapsed, 60)
    assert store.finish(again, {"by": "w2"})
    assert [(row["worker"], row["result"]) for row in store.jobs("done")] == [("w2", {"by": "w2"})]


def test_a_job_that_keeps_killing_its_workers_is_given_up_after_max_attempts(store):
    store.submit(_capture(1))
    for _ in range(3):
        assert store.take("w", -1, max_attempts=3) is not None
    assert store.take("w", 60, max_attempts=3) is None
    job = store.jobs()[0]
    assert job["attempts"] == 3
    # Listed as given up, with why, not as taken for ever (it was, with a lease long ended)
    assert job["state"] == "given-up" and job["finished"] is not None
    assert job["result"] == {"reason": "given up: taken 3 times, never finished"}
    assert store.jobs("taken") == [] and [row["id"] for row in store.jobs("given-up")] == [job["id"]]


def test_a_capture_without_target_or_fingerprint_is_refused(store):
    with pytest.raises(ValueError, match="names its 'target'"):
        store.submit({"args": []})


TAKER = '''
import sys
from regrow import Store
store = Store(sys.argv[1])
done = []
while (job := store.take(sys.argv[2], 60)) is not None:
    if store.finish(job, {"by": sys.argv[2]}):
        done.append(job.id)
print(" ".join(map(str, done)), flush=True)
store.close()
'''


def test_four_processes_drain_the_queue_each_job_done_once(store, store_url, tmp_path):
    ids = {store.submit(_capture(n)) for n in range(120)}
    script = _script(tmp_path, "taker.py", TAKER)
    takers = [subprocess.Popen([sys.executable, str(script), store_url, f"w{n}"], env=PYTHON_PATH,
                               stdout=subprocess.PIPE, text=True) for n in range(4)]
    done = [int(i) for t in takers for i in t.communicate(timeout=300)[0].split()]
    assert sorted(done) == sorted(ids)  # every job done, none twice
    assert {row["state"] for row in store.jobs()} == {"done"}


def test_sessions_the_store_missed_are_kept_up_to_the_bound_and_written_oldest_first(tmp_path, monkeypatch):
    from regrow._result import RepairResult
    from regrow._stores import _base

    store = Store(tmp_path / "regrow.db")
    try:
        monkeypatch.setattr(_base, "BACKLOG", 3)
        written = store._record

        def away(result, key, now):
            raise OSError("the store is away")

        monkeypatch.setattr(store, "_record", away)
        for n in range(5):
            with pytest.raises(OSError):
                store.record(RepairResult(False, f"f{n}", None, reason="no fix"), key=None)
        monkeypatch.setattr(store, "_record", written)
        assert store.flush() == 3  # the two oldest were dropped at the bound
        assert [s["qualname"] for s in reversed(store.sessions())] == ["f2", "f3", "f4"]
        assert store.flush() == 0
    finally:
        store.close()

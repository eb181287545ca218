"""The SQLite store: one file, shared by the threads and processes of one machine.

WAL mode, a busy timeout and short transactions; a write transaction begins ``IMMEDIATE``, so a
claim or a take is decided under the file's write lock, one process at a time.

**Forks.** SQLite keeps process-wide mutexes (its allocator's, its page cache's, its file layer's) that
a thread holds inside a call. A fork made while another thread is in one leaves that mutex held in the
child for good, and the child's first SQLite call hangs (measured: a thread polling a store while the
main thread forked 300 times, each child opening the store: 9 children hung). So every call regrow makes
into SQLite passes :data:`GATE`, and a fork of this process (a web server's workers, a pool, regrow's own
sandbox children) first waits, up to :attr:`ForkGate.WAIT` seconds, for the calls in flight to end
while new ones wait for the fork. The code under repair's own SQLite calls are not regrow's to hold.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ._base import Store, StoreError, closing_on_error
from ._tables import close_in, owning


class ForkGate:
    """Calls into SQLite and forks of this process, never at once (see the module's docstring)."""

    WAIT = 2.0  # the longest a fork waits for the calls in flight (a call waiting out a lock may take 30 s)

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._cond = threading.Condition(threading.Lock())
        self._calls = 0  # calls in flight
        self._forks = 0  # forks being made: new calls wait for them

    def _here(self) -> threading.Condition:
        """This process's condition: in a forked one, the calls and forks of its parent's threads are not its
        own, and the lock may have been held by one of them (made anew here rather than in an at-fork handler,
        which every sandbox child would run)."""
        if self._pid != os.getpid():
            with owning():
                if self._pid != os.getpid():
                    self._cond, self._calls, self._forks = threading.Condition(threading.Lock()), 0, 0
                    self._pid = os.getpid()
        return self._cond

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        cond = self._here()
        with cond:
            while self._forks:
                cond.wait()
            self._calls += 1
        try:
            yield
        finally:
            with cond:
                self._calls -= 1
                if not self._calls:
                    cond.notify_all()

    def before_fork(self) -> None:
        cond = self._here()
        with cond:
            self._forks += 1
            if self._calls:
                cond.wait_for(lambda: not self._calls, self.WAIT)

    def after_fork_in_parent(self) -> None:
        cond = self._here()
        with cond:
            self._forks -= 1
            if not self._forks:
                cond.notify_all()


GATE = ForkGate()
os.register_at_fork(before=GATE.before_fork, after_in_parent=GATE.after_fork_in_parent)


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with GATE.call():
            return self.db.execute(sql, params).fetchall()

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        with GATE.call():
            return self.db.execute(sql, params).rowcount

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        with GATE.call():
            return int(self.db.execute(sql, params).lastrowid or 0)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with GATE.call():
            self.db.executemany(sql, rows)


_INHERITED: list[Any] = []  # in a forked process: the parent's connections, kept and never closed
LOCKED_WAIT = 30.0  # seconds a connection waits for another process's lock on the file


def wal(db: sqlite3.Connection, wait: float = LOCKED_WAIT) -> None:
    """Put the file in WAL mode. Switching a new file's journal takes a lock that SQLite does not wait
    for: processes opening one new store at once get "database is locked" at once, so it is tried again
    (every 10 ms, up to ``wait`` seconds)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            _execute(db, "PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(0.01)


class SQLiteStore(Store):
    """A SQLite file holding the store. One object may be shared by threads; several processes may
    share one file."""

    NOW = "((julianday('now') - 2440587.5) * 86400.0)"
    TYPES: ClassVar[Mapping[str, str]] = {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL"}

    def __init__(self, where: str | Path, *, max_ledger_verdicts: int = 200, lazy: bool = False) -> None:
        text = str(where)
        self.path = Path(text.removeprefix("sqlite://") if text.startswith("sqlite://") else where)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from None
        self.max_ledger_verdicts = max_ledger_verdicts
        self._local = threading.local()
        # Every thread's connection with the lock its transactions hold, closed together: close() (from any
        # thread) takes each one's lock first, so no connection is closed under a query another thread is
        # running on it (sqlite3 frees the statement under it: a crash, seen on 3.13 with the fleet listener).
        self._all: list[tuple[sqlite3.Connection, threading.RLock]] = []
        self._all_lock = threading.Lock()
        self._pid = os.getpid()
        self._closer = self._finalizer()
        if not lazy:  # else made or migrated at the first use (see Store._ready)
            with closing_on_error(self):
                self._ready()

    @property
    def location(self) -> str:
        return str(self.path)

    def _db(self) -> sqlite3.Connection:
        """This thread's connection."""
        return self._connection()[0]

    def _connection(self) -> tuple[sqlite3.Connection, threading.RLock]:
        """This thread's connection and the lock its transactions hold."""
        if self._pid != os.getpid():
            self._own()
        local = self._local  # close() replaces it: what this thread uses now stays one pair
        mine: tuple[sqlite3.Connection, threading.RLock] | None = getattr(local, "db", None)
        if mine is None:
            with GATE.call():
                db = sqlite3.connect(self.path, timeout=LOCKED_WAIT, isolation_level=None, check_same_thread=False)
            try:
                wal(db)
                _execute(db, "PRAGMA synchronous=NORMAL")
            except BaseException:
                _close(db)
                raise
            mine = local.db = (db, threading.RLock())
            with self._all_lock:
                self._all.append(mine)
        return mine

    def _finalizer(self) -> Any:
        """Closes this process's connections when the store is collected or at exit (in this process only)."""
        return weakref.finalize(self, close_in, os.getpid(), functools.partial(_close_all, self._all, self._all_lock))

    def _own(self) -> None:
        """In a process forked from the one that opened the store: connections of its own. SQLite's rule is
        that a connection never crosses a fork; the parent's are kept here, never used or closed (a close
        could checkpoint the parent's write-ahead log under it)."""
        with owning():
            if self._pid == os.getpid():
                return
            self._closer.detach()
            _INHERITED.append(self._all)
            self._all, self._local, self._all_lock = [], threading.local(), threading.Lock()
            self._closer = self._finalizer()
            self._pid = os.getpid()

    @contextlib.contextmanager
    def _transaction(self, write: bool = True) -> Iterator[_Tx]:
        self._ready()
        db, using = self._connection()
        with using:  # a close() from another thread waits for the end of this transaction
            _execute(db, "BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield _Tx(db)
            except BaseException:
                _execute(db, "ROLLBACK")
                raise
            _execute(db, "COMMIT")

    def close(self) -> None:
        self.closed = True
        if self._pid != os.getpid():  # a forked process that never used the store: nothing here is its own
            return
        _close_all(self._all, self._all_lock)
        self._local = threading.local()


def _close_all(connections: list[tuple[sqlite3.Connection, threading.RLock]], lock: threading.Lock) -> None:
    with lock:
        for db, using in connections:
            with using:
                _close(db)
        connections.clear()


def _execute(db: sqlite3.Connection, sql: str) -> None:
    with GATE.call():
        db.execute(sql)


def _close(db: sqlite3.Connection) -> None:
    with GATE.call():
        db.close()


SQLiteStore.register("", "sqlite")

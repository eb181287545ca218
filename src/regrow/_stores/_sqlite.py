"""The SQLite store: one file, shared by the threads and processes of one machine.

WAL mode, a busy timeout and short transactions; a write transaction begins ``IMMEDIATE``, so a
claim or a take is decided under the file's write lock, one process at a time.
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

from ._base import Store, closing_on_error
from ._tables import close_in, owning


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, params).fetchall()

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.db.execute(sql, params).rowcount

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        return int(self.db.execute(sql, params).lastrowid or 0)

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
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
            db.execute("PRAGMA journal_mode=WAL")
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

    def __init__(self, where: str | Path, *, max_ledger_verdicts: int = 200) -> None:
        text = str(where)
        self.path = Path(text.removeprefix("sqlite://") if text.startswith("sqlite://") else where)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_ledger_verdicts = max_ledger_verdicts
        self._local = threading.local()
        # Every thread's connection with the lock its transactions hold, closed together: close() (from any
        # thread) takes each one's lock first, so no connection is closed under a query another thread is
        # running on it (sqlite3 frees the statement under it: a crash, seen on 3.13 with the fleet listener).
        self._all: list[tuple[sqlite3.Connection, threading.RLock]] = []
        self._all_lock = threading.Lock()
        self._pid = os.getpid()
        self._closer = self._finalizer()
        with closing_on_error(self):
            self._migrate()

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
            db = sqlite3.connect(self.path, timeout=LOCKED_WAIT, isolation_level=None, check_same_thread=False)
            try:
                wal(db)
                db.execute("PRAGMA synchronous=NORMAL")
            except BaseException:
                db.close()
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
        db, using = self._connection()
        with using:  # a close() from another thread waits for the end of this transaction
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield _Tx(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

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
                db.close()
        connections.clear()


SQLiteStore.register("", "sqlite")

"""The store: a SQLite repair cache and attempt ledger, safe under concurrent processes.

A proven fix is remembered under (hash of the target's source, failure fingerprint, identity of
the checks), so the same failure of the same code is fixed again without a search — and still
proven by the checks before it is installed. Every session and every verdict go to the ledger.

A fix keeps its origin, and only a trusted proposer's fix is stored as the engine's: the cache
proposer (``_cache``) trusts a fix only where this record says regrow's engine wrote it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._candidate import Candidate

if TYPE_CHECKING:
    from ._result import RepairResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS fixes (
    key TEXT PRIMARY KEY,
    qualname TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    source TEXT NOT NULL,
    origin TEXT NOT NULL,
    operator TEXT NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    qualname TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    ok INTEGER NOT NULL,
    reason TEXT NOT NULL,
    candidates INTEGER NOT NULL,
    duration REAL NOT NULL,
    fix TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    session INTEGER NOT NULL REFERENCES sessions(id),
    origin TEXT NOT NULL,
    operator TEXT NOT NULL,
    ok INTEGER NOT NULL,
    check_name TEXT NOT NULL,
    reason TEXT NOT NULL,
    duration REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_fingerprint ON sessions(fingerprint, created);
"""


ENGINE_ORIGIN = "engine"  # the origin of the built-in engine's candidates (see _engine._plan)
# What an engine-labelled fix is stored as when the proposer that offered it was not trusted.
_UNTRUSTED_ENGINE_LABEL = "unknown (labelled engine by an untrusted proposer)"


class Store:
    """A SQLite file holding the repair cache and the ledger. One object may be shared by threads;
    several processes may share one file (WAL mode, a busy timeout, short transactions)."""

    def __init__(self, path: str | Path, *, max_ledger_verdicts: int = 200) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_ledger_verdicts = max_ledger_verdicts
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []  # every thread's connection, closed together
        self._all_lock = threading.Lock()
        weakref.finalize(self, _close_all, self._all, self._all_lock)
        self._db().executescript(_SCHEMA)  # its own transaction; IF NOT EXISTS makes it race-safe

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
            with self._all_lock:
                self._all.append(db)
        return db

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def lookup(self, key: str) -> Candidate | None:
        """The fix remembered under ``key``, if any, with the origin and operator it was stored with."""
        row = self._db().execute("SELECT source, origin, operator FROM fixes WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        with self._connect() as db:
            db.execute("UPDATE fixes SET hits = hits + 1 WHERE key = ?", (key,))
        source, origin, operator = row
        return Candidate(source, origin=origin, operator=operator, note=f"cached under {key}")

    def origin(self, key: str, source: str) -> str | None:
        """The origin stored for ``source`` under ``key`` (None if the store does not hold that fix)."""
        row = self._db().execute("SELECT origin FROM fixes WHERE key = ? AND source = ?", (key, source)).fetchone()
        return None if row is None else str(row[0])

    def record(self, result: RepairResult, key: str | None) -> int:
        """Write a finished session to the ledger, and its fix to the cache; returns the session id."""
        failure = result.failure
        fingerprint = failure.fingerprint if failure is not None else ""
        fix = result.fix
        now = time.time()
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO sessions (qualname, fingerprint, ok, reason, candidates, duration, fix, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (result.target, fingerprint, int(result.ok), result.reason, result.candidates, result.duration,
                 fix.source if fix else None, now),
            )
            session = int(cursor.lastrowid or 0)
            db.executemany(
                "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(session, a.candidate.origin, a.candidate.operator, int(a.verdict.ok), a.verdict.check,
                  a.verdict.reason, a.verdict.duration) for a in result.history[-self.max_ledger_verdicts :]],
            )
            held = key is not None and db.execute(
                "SELECT 1 FROM fixes WHERE key = ? AND source = ?", (key, fix.source if fix else None)).fetchone()
            if result.ok and fix is not None and key is not None and not held:  # a fix served from here stays as it is
                # The origin is the candidate's, except that only a trusted proposer's fix is stored as the engine's.
                origin = fix.origin if result.trusted or fix.origin != ENGINE_ORIGIN else _UNTRUSTED_ENGINE_LABEL
                db.execute(
                    "INSERT OR REPLACE INTO fixes (key, qualname, fingerprint, source, origin, operator, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, result.target, fingerprint, fix.source, origin, fix.operator, now),
                )
        return session

    def sessions(self, qualname: str | None = None) -> list[dict[str, Any]]:
        """The ledger's sessions, newest first (optionally for one function)."""
        query = "SELECT id, qualname, fingerprint, ok, reason, candidates, duration, fix, created FROM sessions"
        rows = self._db().execute(
            query + (" WHERE qualname = ?" if qualname else "") + " ORDER BY id DESC", (qualname,) if qualname else ()
        ).fetchall()
        names = ("id", "qualname", "fingerprint", "ok", "reason", "candidates", "duration", "fix", "created")
        return [dict(zip(names, row, strict=True)) for row in rows]

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        _close_all(self._all, self._all_lock)
        self._local = threading.local()


def _close_all(connections: list[sqlite3.Connection], lock: threading.Lock) -> None:
    with lock:
        for db in connections:
            db.close()
        connections.clear()

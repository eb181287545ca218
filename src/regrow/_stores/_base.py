"""The store's interface: the repair cache, the ledger, single-flight claims and jobs, written once.

Every query is written here, once, with ``?`` placeholders and two words a backend spells its own
way: ``{now}`` (the database's clock in seconds, so the hosts of a fleet agree on when a lease
ends) and ``{skip}`` (``FOR UPDATE SKIP LOCKED`` where the database has it). A backend only opens
transactions (:meth:`Store._transaction`) and runs statements in them (:class:`Tx`).

``Store(where)`` picks the backend from ``where``: a ``postgresql://`` URL is the PostgreSQL store,
anything else a SQLite file, as it always was.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._candidate import Candidate
from ._fleet import FleetTables
from ._schema import MIGRATIONS
from ._tables import (
    _INSTALL_FIELDS,
    _JOB_FIELDS,
    _SESSION_FIELDS,
    _UNTRUSTED_ENGINE_LABEL,
    ENGINE_ORIGIN,
    HOST,
    VERDICTS_OF_SESSION,
    Job,
    StoreError,
    Tx,
    verdicts,
)

if TYPE_CHECKING:
    from .._result import RepairResult

__all__ = ["ENGINE_ORIGIN", "HOST", "_INSTALL_FIELDS", "_JOB_FIELDS", "Job", "Store", "StoreError", "Tx",
           "closing_on_error"]
log = logging.getLogger("regrow")
_BACKENDS: dict[str, type[Store]] = {}  # URL scheme -> backend, filled as the backends are imported
BACKLOG = 1000  # sessions kept in memory while the store cannot be reached, written when it is back
# The sessions kept for each store location, whichever Store object of this process failed to write them.
_BACKLOGS: dict[str, collections.deque[tuple[RepairResult, str | None, float]]] = {}
_BACKLOG_LOCK = threading.Lock()


class Store(FleetTables):
    """The repair cache, the ledger, single-flight claims and jobs, in SQLite or PostgreSQL.

    ``Store("regrow.db")`` is a SQLite file (the default, one machine, several processes);
    ``Store("postgresql://…")`` a PostgreSQL database a fleet of processes shares (``regrow[postgres]``).
    The session and the front-ends use only what is defined here. A session that cannot be recorded
    (the store is away) is kept in this process's memory (up to :data:`BACKLOG` a location, the oldest
    dropped first, with a warning) and written, with the time it ran, by the next record that reaches
    the store at that location (or the fleet listener, as soon as the store answers).
    """

    NOW: ClassVar[str]  # the database's clock, in seconds since the epoch
    SKIP: ClassVar[str] = ""  # what makes a worker pass over rows another worker holds
    LOCK: ClassVar[str] = ""  # a statement taking the lock under which migrations run
    NOTIFY: ClassVar[str] = ""  # a statement waking the fleet's listeners when a fix lands (one parameter: its key)
    closed: bool = False
    TYPES: ClassVar[Mapping[str, str]]  # {id} and {real} in the schema
    max_ledger_verdicts: int

    def __new__(cls, where: str | Path, **options: Any) -> Store:
        backend = cls
        if cls is Store:  # the interface itself: the backend ``where`` names
            scheme = str(where).partition("://")[0] if "://" in str(where) else ""
            if scheme not in _BACKENDS:
                raise StoreError(f"no store backend for {scheme}:// (give a SQLite file path or postgresql://…)")
            backend = _BACKENDS[scheme]
        return super().__new__(backend)

    @classmethod
    def open(cls, where: str | Path, **options: Any) -> Store:
        """The store at ``where``: a SQLite file path, or a ``postgresql://`` URL."""
        return Store(where, **options)

    @classmethod
    def register(cls, *schemes: str) -> None:
        for scheme in schemes:
            _BACKENDS[scheme] = cls

    # What a backend defines (``Store`` itself is never an instance: ``Store(where)`` is a backend's).
    @property
    def location(self) -> str:
        """Where the store is, fit for a log line (a URL's password is masked)."""
        raise NotImplementedError

    def _transaction(self, write: bool = True) -> contextlib.AbstractContextManager[Tx]:
        """One transaction, committed when the block ends and rolled back when it raises."""
        raise NotImplementedError

    def close(self) -> None:
        """Close every connection this store opened."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.location

    def _sql(self, text: str) -> str:
        return text.replace("{now}", self.NOW).replace("{skip}", self.SKIP)

    # Schema ---------------------------------------------------------------------------------------

    _migrated = False  # the schema is up to date (made or migrated at the first use, or at open)
    _migrating = False

    def _ready(self) -> None:
        """Make or migrate the schema if this store has not yet (every transaction calls this first). A store
        opened ``lazy`` (the one a process shares: regrow.heal(store=…), watch, the middleware) reaches the
        database at its first use, so an app starts, and keeps its local behaviour, while its store is away."""
        if self._migrated:
            return
        with self.__dict__.setdefault("_migration", threading.RLock()):  # (setdefault is atomic)
            if self._migrated or self._migrating:  # done by another thread, or this one is migrating
                return
            self._migrating = True
            try:
                self._migrate()
                self._migrated = True
            finally:
                self._migrating = False

    def reach(self) -> None:
        """Reach the store now, its schema made or migrated: a :class:`StoreError` says why it cannot be."""
        self._ready()

    def _migrate(self) -> None:
        with self._transaction() as tx:
            if self.LOCK:
                tx.rows(self.LOCK)
            tx.change("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            current = int(tx.rows("SELECT COALESCE(MAX(version), 0) FROM schema_version")[0][0])
            if current > len(MIGRATIONS):
                raise StoreError(f"{self.location} has schema version {current}, newer than this regrow's "
                                 f"{len(MIGRATIONS)}: upgrade regrow")
            for version in range(current + 1, len(MIGRATIONS) + 1):
                for statement in MIGRATIONS[version - 1]:
                    tx.change(statement.format(**self.TYPES))
                tx.change("INSERT INTO schema_version (version) VALUES (?)", (version,))

    def found_version(self) -> int | None:
        """The schema version the database holds, read without making or migrating it (``None``: it holds no
        regrow store): what a command that only reads checks first, so it never writes tables into a database
        that is not a store."""
        migrated, self._migrated = self._migrated, True
        try:
            with self._transaction(write=False) as tx:
                return int(tx.rows("SELECT COALESCE(MAX(version), 0) FROM schema_version")[0][0])
        except StoreError:
            raise
        except Exception as exc:
            text = str(exc)
            if "schema_version" in text and ("does not exist" in text or "no such table" in text):
                return None
            raise StoreError(f"cannot read the store at {self.location}: {exc}") from None
        finally:
            self._migrated = migrated

    def schema_version(self) -> int:
        """The newest schema version applied to this store."""
        with self._transaction(write=False) as tx:
            return int(tx.rows("SELECT MAX(version) FROM schema_version")[0][0])

    # The repair cache and the ledger --------------------------------------------------------------

    def lookup(self, key: str) -> Candidate | None:
        """The fix remembered under ``key``, if any, with the origin and operator it was stored with."""
        with self._transaction() as tx:
            found = tx.rows("SELECT source, origin, operator FROM fixes WHERE key = ?", (key,))
            if found:
                tx.change("UPDATE fixes SET hits = hits + 1 WHERE key = ?", (key,))
        if not found:
            return None
        source, origin, operator = found[0]
        return Candidate(source, origin=origin, operator=operator, note=f"cached under {key}")

    def origin(self, key: str, source: str) -> str | None:
        """The origin stored for ``source`` under ``key`` (None if the store does not hold that fix)."""
        with self._transaction(write=False) as tx:
            found = tx.rows("SELECT origin FROM fixes WHERE key = ? AND source = ?", (key, source))
        return None if not found else str(found[0][0])

    def record(self, result: RepairResult, key: str | None) -> int:
        """Write a finished session to the ledger, and its fix to the cache; returns the session id.
        When the store cannot be reached the session is kept to be written later, and the error raised."""
        now = time.time()
        try:
            session = self._record(result, key, now)
        except Exception:
            self._keep(result, key, now)
            raise
        self.flush()
        return session

    def flush(self) -> int:
        """Write the sessions kept while the store was away, oldest first; how many were written
        (it stops at the first that still cannot be, keeping it and the rest)."""
        backlog = _BACKLOGS.get(self.location)
        written = 0
        while backlog:
            with _BACKLOG_LOCK:
                if not backlog:
                    break
                result, key, when = backlog[0]
            try:
                self._record(result, key, when)
            except Exception:
                break
            with _BACKLOG_LOCK:
                if backlog and backlog[0][0] is result:
                    backlog.popleft()
            written += 1
        return written

    def _keep(self, result: RepairResult, key: str | None, when: float) -> None:
        with _BACKLOG_LOCK:
            backlog = _BACKLOGS.setdefault(self.location, collections.deque())
            if len(backlog) >= BACKLOG:
                log.warning("regrow: %s was away for %d sessions: the oldest is not recorded", self, BACKLOG)
                backlog.popleft()
            backlog.append((result, key, when))

    def _record(self, result: RepairResult, key: str | None, now: float) -> int:
        failure, fix = result.failure, result.fix
        fingerprint = failure.fingerprint if failure is not None else ""
        with self._transaction() as tx:
            session = tx.insert(
                "INSERT INTO sessions (qualname, fingerprint, ok, reason, candidates, duration, fix, created, host) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (result.target, fingerprint, int(result.ok), result.reason,
                 result.candidates + result.screened,  # every candidate judged, the engine's own screening too
                 result.duration,
                 fix.source if fix else None, now, HOST))
            tx.many("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(session, a.candidate.origin, a.candidate.operator, int(a.verdict.ok), a.verdict.check,
                      a.verdict.reason, a.verdict.duration) for a in result.history[-self.max_ledger_verdicts:]])
            held = key is not None and fix is not None and tx.rows(
                "SELECT 1 FROM fixes WHERE key = ? AND source = ?", (key, fix.source))
            if result.ok and fix is not None and key is not None and not held:  # a fix served from here stays
                # The origin is the candidate's, except that only a trusted proposer's fix is stored as the engine's.
                origin = fix.origin if result.trusted or fix.origin != ENGINE_ORIGIN else _UNTRUSTED_ENGINE_LABEL
                tx.change(
                    "INSERT INTO fixes (key, qualname, fingerprint, source, origin, operator, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET qualname = excluded.qualname, "
                    "fingerprint = excluded.fingerprint, source = excluded.source, origin = excluded.origin, "
                    "operator = excluded.operator, created = excluded.created, hits = 0",
                    (key, result.target, fingerprint, fix.source, origin, fix.operator, now))
                tx.insert("INSERT INTO landings (key, host, created) VALUES (?, ?, ?)", (key, HOST, now))
                if self.NOTIFY:  # delivered when the transaction commits: the wake-up only, the table is the truth
                    tx.rows(self.NOTIFY, (key,))
        return session

    def sessions(self, qualname: str | None = None) -> list[dict[str, Any]]:
        """The ledger's sessions, newest first (optionally for one function), with the host of each."""
        query = f"SELECT {', '.join(_SESSION_FIELDS)} FROM sessions"
        with self._transaction(write=False) as tx:
            found = tx.rows(query + (" WHERE qualname = ?" if qualname else "") + " ORDER BY id DESC",
                            (qualname,) if qualname else ())
        return [dict(zip(_SESSION_FIELDS, row, strict=True)) for row in found]

    def session(self, number: int) -> dict[str, Any] | None:
        """One session of the ledger with its verdicts (``None``: no such session)."""
        with self._transaction(write=False) as tx:
            found = tx.rows(f"SELECT {', '.join(_SESSION_FIELDS)} FROM sessions WHERE id = ?", (number,))
            judged = tx.rows(VERDICTS_OF_SESSION, (number,)) if found else []
        if not found:
            return None
        return {**dict(zip(_SESSION_FIELDS, found[0], strict=True)), "verdicts": verdicts(judged)}

    # Distribution -------------------------------------------------------------------------------

    def last_landing(self) -> int:
        """The id of the newest fix that landed (0: none yet): a listener adopts only what lands after."""
        with self._transaction(write=False) as tx:
            return int(tx.rows("SELECT COALESCE(MAX(id), 0) FROM landings")[0][0])

    def landings(self, after: int) -> list[tuple[int, Candidate, str]]:
        """The fixes that landed after landing ``after``, oldest first: (landing id, the fix with its
        origin, the key it is stored under)."""
        with self._transaction(write=False) as tx:
            found = tx.rows("SELECT l.id, f.key, f.source, f.origin, f.operator FROM landings l "
                            "JOIN fixes f ON f.key = l.key WHERE l.id > ? ORDER BY l.id", (after,))
        return [(int(id_), Candidate(source, origin=origin, operator=operator, note=f"landed under {key}"), str(key))
                for id_, key, source, origin, operator in found]

    def landings_for(self, source: str) -> list[tuple[int, Candidate, str]]:
        """The newest fix landed for each failure of the source whose hash is ``source``: what a process
        that starts running that source adopts (as :meth:`landings`)."""
        prefix = f"{source}:"
        with self._transaction(write=False) as tx:
            found = tx.rows("SELECT MAX(l.id), f.key, f.source, f.origin, f.operator FROM landings l "
                            "JOIN fixes f ON f.key = l.key WHERE substr(l.key, 1, ?) = ? "
                            "GROUP BY f.key, f.source, f.origin, f.operator ORDER BY MAX(l.id)", (len(prefix), prefix))
        return [(int(id_), Candidate(source, origin=origin, operator=operator, note=f"landed under {key}"), str(key))
                for id_, key, source, origin, operator in found]

    def wake(self, timeout: float) -> None:
        """Return when a fix may have landed, or after ``timeout`` seconds (polling: the timeout)."""
        time.sleep(timeout)

    def installed(self, key: str, qualname: str, ok: bool, reason: str) -> None:
        """Record that this process adopted (or refused) the fix stored under ``key``."""
        with self._transaction() as tx:
            tx.insert("INSERT INTO installs (key, qualname, host, pid, ok, reason, created) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)", (key, qualname, HOST, os.getpid(), int(ok), reason, time.time()))

    def installs(self) -> list[dict[str, Any]]:
        """Every adoption of a landed fix by a running process, newest first, with its host."""
        with self._transaction(write=False) as tx:
            found = tx.rows(f"SELECT {', '.join(_INSTALL_FIELDS)} FROM installs ORDER BY id DESC")
        rows = [dict(zip(_INSTALL_FIELDS, row, strict=True)) for row in found]
        return [{**row, "ok": bool(row["ok"])} for row in rows]  # a boolean on both backends (SQLite keeps 1)


@contextlib.contextmanager
def closing_on_error(store: Store) -> Iterator[None]:
    """Close ``store`` if opening it fails after its connections were made."""
    try:
        yield
    except BaseException:
        store.close()
        raise

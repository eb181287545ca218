"""The store's interface: the repair cache, the ledger, single-flight claims and jobs, written once.

Every query is written here, once, with ``?`` placeholders and two words a backend spells its own
way: ``{now}`` (the database's clock in seconds, so the hosts of a fleet agree on when a lease
ends) and ``{skip}`` (``FOR UPDATE SKIP LOCKED`` where the database has it). A backend only opens
transactions (:meth:`Store._transaction`) and runs statements in them (:class:`Tx`).

``Store(where)`` picks the backend from ``where``: a ``postgresql://`` URL is the PostgreSQL store,
anything else a SQLite file, as it always was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .._candidate import Candidate
from ._schema import MIGRATIONS

if TYPE_CHECKING:
    from .._result import RepairResult

ENGINE_ORIGIN = "engine"  # the origin of the built-in engine's candidates (see _engine._plan)
# What an engine-labelled fix is stored as when the proposer that offered it was not trusted.
_UNTRUSTED_ENGINE_LABEL = "unknown (labelled engine by an untrusted proposer)"
_SESSION_FIELDS = ("id", "qualname", "fingerprint", "ok", "reason", "candidates", "duration", "fix", "created", "host")
_JOB_FIELDS = ("id", "target", "fingerprint", "state", "worker", "attempts", "result", "host", "created", "finished")
_INSTALL_FIELDS = ("id", "key", "qualname", "host", "pid", "ok", "reason", "created")
_BACKENDS: dict[str, type[Store]] = {}  # URL scheme -> backend, filled as the backends are imported
HOST = socket.gethostname()


class StoreError(RuntimeError):
    """The store cannot be opened or used as asked (a missing driver, a newer schema)."""


class Tx(Protocol):
    """Statements run in one open transaction of a backend (``?`` placeholders)."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def change(self, sql: str, params: Sequence[Any] = ()) -> int: ...  # how many rows it changed
    def insert(self, sql: str, params: Sequence[Any]) -> int: ...  # the id of the row it inserted
    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


@dataclasses.dataclass(frozen=True)
class Job:
    """A job taken by a worker: its id, the capture it was submitted with, and how often it was taken."""

    id: int
    capture: dict[str, Any]
    attempts: int
    worker: str


class Store:
    """The repair cache, the ledger, single-flight claims and jobs, in SQLite or PostgreSQL.

    ``Store("regrow.db")`` is a SQLite file (the default, one machine, several processes);
    ``Store("postgresql://…")`` a PostgreSQL database a fleet of processes shares (``regrow[postgres]``).
    The session and the front-ends use only what is defined here.
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
        """Write a finished session to the ledger, and its fix to the cache; returns the session id."""
        failure, fix = result.failure, result.fix
        fingerprint = failure.fingerprint if failure is not None else ""
        now = time.time()
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
        return [dict(zip(_INSTALL_FIELDS, row, strict=True)) for row in found]

    # Budgets across the fleet ---------------------------------------------------------------------

    def set_budget(self, *, spend_cap: float | None = None, calls_per_failure_per_hour: int | None = None) -> None:
        """Set the fleet's model budgets, read by every process at every claim: a cap on what all sessions
        spend in total (USD), and model calls per failure fingerprint per rolling hour (``None``: no
        fleet-wide cap; the hourly calls fall back to each model proposer's own limit)."""
        with self._transaction() as tx:
            for name, value in (("spend_cap", spend_cap), ("calls_per_failure_per_hour", calls_per_failure_per_hour)):
                tx.change("DELETE FROM budget WHERE name = ?", (name,))
                if value is not None:
                    tx.change("INSERT INTO budget (name, value) VALUES (?, ?)", (name, float(value)))

    def spend_refusal(self, fingerprint: str, hourly: int | None) -> str:
        """Why a session for ``fingerprint`` may not call a model now (``""``: it may), decided in one
        transaction from the spend table: the fleet's calls for it in the last hour (database clock) against
        the fleet's hourly limit (else ``hourly``), and the fleet's total spend against its cap."""
        with self._transaction() as tx:
            if self.LOCK:
                tx.rows(self.LOCK)  # one decision at a time fleet-wide
            limits = dict(tx.rows("SELECT name, value FROM budget"))
            hourly = int(limits["calls_per_failure_per_hour"]) if "calls_per_failure_per_hour" in limits else hourly
            if hourly is not None:
                calls = int(tx.rows(self._sql("SELECT COALESCE(SUM(calls), 0) FROM spend WHERE fingerprint = ? "
                                              "AND created > {now} - 3600"), (fingerprint,))[0][0])
                if calls >= hourly:
                    return (f"this failure ({fingerprint}) already had {calls} model calls across the fleet in the "
                            f"last hour (limit {hourly}): it is not sent to a model again yet")
            cap = limits.get("spend_cap")
            if cap is not None:
                spent = float(tx.rows("SELECT COALESCE(SUM(cost), 0) FROM spend")[0][0])
                if spent >= float(cap):
                    return f"the fleet's model spend cap of ${float(cap):g} is spent (${spent:.4f})"
        return ""

    def spend(self, fingerprint: str, calls: int, cost: float) -> None:
        """Count what a session's model calls spent, fleet-wide (``cost`` in USD)."""
        with self._transaction() as tx:
            tx.change(self._sql("INSERT INTO spend (fingerprint, calls, cost, host, created) "
                                "VALUES (?, ?, ?, ?, {now})"), (fingerprint, int(calls), float(cost), HOST))

    # Single flight --------------------------------------------------------------------------------

    def claim(self, fingerprint: str, holder: str, lease_seconds: float) -> bool:
        """Claim the repair of ``fingerprint`` for ``holder`` until the lease ends; whether it is now
        ``holder``'s. Atomic across processes and hosts: of any number claiming at once, one wins. A
        claim whose lease has ended (its holder died) goes to the next to claim; the holder renews its
        own claim by claiming again."""
        with self._transaction() as tx:
            return tx.change(self._sql(
                "INSERT INTO claims (fingerprint, holder, claimed, expires) VALUES (?, ?, {now}, {now} + ?) "
                "ON CONFLICT (fingerprint) DO UPDATE SET holder = excluded.holder, claimed = excluded.claimed, "
                "expires = excluded.expires WHERE claims.expires < {now} OR claims.holder = excluded.holder"),
                (fingerprint, holder, float(lease_seconds))) == 1

    def release(self, fingerprint: str, holder: str) -> bool:
        """Give up ``holder``'s claim on ``fingerprint``; whether it held it."""
        with self._transaction() as tx:
            return tx.change("DELETE FROM claims WHERE fingerprint = ? AND holder = ?", (fingerprint, holder)) == 1

    def holder(self, fingerprint: str) -> str | None:
        """Who holds an unexpired claim on ``fingerprint``, if anyone."""
        with self._transaction(write=False) as tx:
            found = tx.rows(self._sql("SELECT holder FROM claims WHERE fingerprint = ? AND expires >= {now}"),
                            (fingerprint,))
        return str(found[0][0]) if found else None

    def landed(self, key: str) -> bool:
        """Whether a proven fix is stored for the failure claimed under ``key`` (``source hash:fingerprint``),
        whatever checks proved it."""
        prefix = f"{key}:"
        with self._transaction(write=False) as tx:
            return bool(tx.rows("SELECT 1 FROM fixes WHERE substr(key, 1, ?) = ? LIMIT 1", (len(prefix), prefix)))

    def claims(self) -> list[dict[str, Any]]:
        """Every claim with its holder, when it was claimed and when its lease ends (database clock)."""
        with self._transaction(write=False) as tx:
            found = tx.rows("SELECT fingerprint, holder, claimed, expires FROM claims ORDER BY fingerprint")
        return [dict(zip(("fingerprint", "holder", "claimed", "expires"), row, strict=True)) for row in found]

    # Jobs -----------------------------------------------------------------------------------------

    def submit(self, capture: Mapping[str, Any]) -> int:
        """Queue a captured failure (see ``regrow._service._worker.capture``) for a worker; returns the job's id."""
        target, fingerprint = capture.get("target"), capture.get("fingerprint")
        if not isinstance(target, str) or not isinstance(fingerprint, str):
            raise ValueError("a capture names its 'target' (module::qualname) and its failure's 'fingerprint'")
        text = json.dumps(dict(capture))
        with self._transaction() as tx:
            return tx.insert("INSERT INTO jobs (target, fingerprint, capture, host, created) VALUES (?, ?, ?, ?, ?)",
                             (target, fingerprint, text, HOST, time.time()))

    def take(self, worker: str, lease_seconds: float, *, max_attempts: int = 3) -> Job | None:
        """The oldest job no live worker holds, now ``worker``'s until the lease ends (``None``: none
        waits). A job whose worker died (its lease ended) is taken again, up to ``max_attempts`` times."""
        with self._transaction() as tx:
            found = tx.rows(self._sql(
                "SELECT id FROM jobs WHERE (state = 'queued' OR (state = 'taken' AND expires < {now})) "
                "AND attempts < ? ORDER BY id LIMIT 1 {skip}"), (max_attempts,))
            if not found:
                return None
            job = int(found[0][0])
            tx.change(self._sql("UPDATE jobs SET state = 'taken', worker = ?, expires = {now} + ?, "
                                "attempts = attempts + 1 WHERE id = ?"), (worker, float(lease_seconds), job))
            capture, attempts = tx.rows("SELECT capture, attempts FROM jobs WHERE id = ?", (job,))[0]
        return Job(job, json.loads(capture), int(attempts), worker)

    def renew(self, job: Job, lease_seconds: float) -> bool:
        """Extend the lease on a job this worker still holds; whether it does."""
        with self._transaction() as tx:
            return tx.change(self._sql("UPDATE jobs SET expires = {now} + ? WHERE id = ? AND worker = ? "
                                       "AND state = 'taken'"), (float(lease_seconds), job.id, job.worker)) == 1

    def finish(self, job: Job, result: Mapping[str, Any]) -> bool:
        """Mark ``job`` done with ``result`` (plain data); whether this worker completed it — false when
        its lease ended and another worker took the job, so a job is done once."""
        with self._transaction() as tx:
            return tx.change(self._sql("UPDATE jobs SET state = 'done', result = ?, finished = {now} "
                                       "WHERE id = ? AND worker = ? AND state = 'taken'"),
                             (json.dumps(dict(result)), job.id, job.worker)) == 1

    def jobs(self, state: str | None = None) -> list[dict[str, Any]]:
        """The jobs, oldest first (optionally in one state: queued, taken or done), results decoded."""
        query = f"SELECT {', '.join(_JOB_FIELDS)} FROM jobs"
        with self._transaction(write=False) as tx:
            found = tx.rows(query + (" WHERE state = ?" if state else "") + " ORDER BY id", (state,) if state else ())
        rows = [dict(zip(_JOB_FIELDS, row, strict=True)) for row in found]
        for row in rows:
            row["result"] = None if row["result"] is None else json.loads(row["result"])
        return rows


@contextlib.contextmanager
def closing_on_error(store: Store) -> Iterator[None]:
    """Close ``store`` if opening it fails after its connections were made."""
    try:
        yield
    except BaseException:
        store.close()
        raise

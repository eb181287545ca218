"""The fleet's tables of the store: budgets, single-flight claims and jobs (see :class:`regrow._stores._base.Store`)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from ._tables import _JOB_FIELDS, HOST, Job, Tx


class FleetTables:
    """The budgets, claims and jobs every backend shares; written once, over a backend's transactions."""

    LOCK: ClassVar[str] = ""  # a statement taking the fleet-wide lock (migrations, budget decisions)

    def _transaction(self, write: bool = True) -> contextlib.AbstractContextManager[Tx]:
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        raise NotImplementedError

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
            return self._refusal(tx, fingerprint, hourly)

    def reserve(self, fingerprint: str, hourly: int | None, cost: float) -> str:
        """Reserve one model call for ``fingerprint`` before it is made: in the same transaction as the
        check of :meth:`spend_refusal`, the call is counted with its estimated ``cost`` (USD), so
        sessions on many hosts cannot each make "one more" call past a limit. ``""``: reserved; else why not."""
        with self._transaction() as tx:
            refusal = self._refusal(tx, fingerprint, hourly)
            if not refusal:
                tx.change(self._sql("INSERT INTO spend (fingerprint, calls, cost, host, created) "
                                    "VALUES (?, 1, ?, ?, {now})"), (fingerprint, float(cost), HOST))
        return refusal

    def _refusal(self, tx: Tx, fingerprint: str, hourly: int | None) -> str:
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
        waits). A job whose worker died (its lease ended) is taken again, up to ``max_attempts`` times; then
        it is ``given-up``, with the reason as its result."""
        with self._transaction() as tx:
            # A job taken max_attempts times whose last lease ended is given up: listed so, not as taken for ever
            tx.change(self._sql("UPDATE jobs SET state = 'given-up', finished = {now}, result = ? WHERE "
                                "state = 'taken' AND expires < {now} AND attempts >= ?"),
                      (json.dumps({"reason": f"given up: taken {max_attempts} times, never finished"}), max_attempts))
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
        """The jobs, oldest first (optionally in one state: queued, taken, done or given-up), results decoded."""
        query = f"SELECT {', '.join(_JOB_FIELDS)} FROM jobs"
        with self._transaction(write=False) as tx:
            found = tx.rows(query + (" WHERE state = ?" if state else "") + " ORDER BY id", (state,) if state else ())
        rows = [dict(zip(_JOB_FIELDS, row, strict=True)) for row in found]
        for row in rows:
            row["result"] = None if row["result"] is None else json.loads(row["result"])
        return rows

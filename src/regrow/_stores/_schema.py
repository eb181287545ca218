"""The store's schema as numbered migrations, written once for both backends.

A store records the versions it has applied in ``schema_version``; opening it applies the missing
ones in one transaction (under a lock, so processes opening it at once apply each version once).
Version 1 is the schema of the first SQLite store, with ``IF NOT EXISTS`` so a file written before
versions were kept is adopted as it is. ``{id}`` and ``{real}`` are the backend's spelling of an
auto-numbered key and of a double-precision number.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: the repair cache and the ledger
        """CREATE TABLE IF NOT EXISTS fixes (
            key TEXT PRIMARY KEY,
            qualname TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            source TEXT NOT NULL,
            origin TEXT NOT NULL,
            operator TEXT NOT NULL,
            created {real} NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0)""",
        """CREATE TABLE IF NOT EXISTS sessions (
            id {id},
            qualname TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            ok INTEGER NOT NULL,
            reason TEXT NOT NULL,
            candidates INTEGER NOT NULL,
            duration {real} NOT NULL,
            fix TEXT,
            created {real} NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS verdicts (
            session INTEGER NOT NULL REFERENCES sessions(id),
            origin TEXT NOT NULL,
            operator TEXT NOT NULL,
            ok INTEGER NOT NULL,
            check_name TEXT NOT NULL,
            reason TEXT NOT NULL,
            duration {real} NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS sessions_by_fingerprint ON sessions(fingerprint, created)",
    ),
    (  # 2: the fleet — which host did what, single-flight claims, and jobs for workers
        "ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT ''",
        """CREATE TABLE claims (
            fingerprint TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            claimed {real} NOT NULL,
            expires {real} NOT NULL)""",
        """CREATE TABLE jobs (
            id {id},
            target TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            capture TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'queued',
            worker TEXT,
            expires {real},
            attempts INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            host TEXT NOT NULL,
            created {real} NOT NULL,
            finished {real})""",
        "CREATE INDEX jobs_waiting ON jobs(state, id)",
    ),
    (  # 3: distribution — every fix that landed (what running processes adopt), every adoption with its host
        """CREATE TABLE landings (
            id {id},
            key TEXT NOT NULL,
            host TEXT NOT NULL,
            created {real} NOT NULL)""",
        """CREATE TABLE installs (
            id {id},
            key TEXT NOT NULL,
            qualname TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            ok INTEGER NOT NULL,
            reason TEXT NOT NULL,
            created {real} NOT NULL)""",
    ),
    (  # 4: budgets across the fleet — what model calls every session spent, and the fleet's limits
        """CREATE TABLE spend (
            id {id},
            fingerprint TEXT NOT NULL,
            calls INTEGER NOT NULL,
            cost {real} NOT NULL,
            host TEXT NOT NULL,
            created {real} NOT NULL)""",
        "CREATE INDEX spend_by_fingerprint ON spend(fingerprint, created)",
        "CREATE TABLE budget (name TEXT PRIMARY KEY, value {real})",
    ),
)

VERSION = len(MIGRATIONS)  # the schema this regrow writes

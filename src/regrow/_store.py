"""The store: the repair cache and the attempt ledger (and, for a fleet, claims and jobs).

A proven fix is remembered under (hash of the target's source, failure fingerprint, identity of
the checks), so the same failure of the same code is fixed again without a search — and still
proven by the checks before it is installed. Every session and every verdict go to the ledger.

A fix keeps its origin, and only a trusted proposer's fix is stored as the engine's: the cache
proposer (``_cache``) trusts a fix only where this record says regrow's engine wrote it.

:class:`Store` is the interface; ``Store(where)`` opens the backend ``where`` names (``_stores/``):
a SQLite file by default, or a ``postgresql://`` URL that a fleet of processes shares.
"""

from __future__ import annotations

from ._stores._base import ENGINE_ORIGIN, Job, Store, StoreError
from ._stores._postgres import PostgresStore
from ._stores._sqlite import SQLiteStore

__all__ = ["ENGINE_ORIGIN", "Job", "PostgresStore", "SQLiteStore", "Store", "StoreError"]

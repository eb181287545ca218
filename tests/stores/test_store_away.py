"""A store that is away (unreachable, migrated by a newer regrow, locked) never stops an app from starting or a
function from healing on its own; a worker waits for it instead of dying."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

import regrow
from regrow._stores._sqlite import SQLiteStore
from regrow._stores._tables import StoreError

TOTAL = '''
import regrow

STORE = {store!r}


def test_total(fn):
    assert fn([2, 3, 5]) == 10


@regrow.heal(tests=[test_total], store=STORE)
def total(values):
    return sum(values[i] for i in range(len(values) + 1))
'''


def test_an_unreachable_store_never_stops_the_app_from_importing(make_module) -> None:
    """Before, the import raised StoreError ("cannot reach the store … pool initialization incomplete") after 10 s,
    with REGROW_DISABLE=1 too: the app never started."""
    mod = make_module(TOTAL.format(store="postgresql://regrow:hunter2@127.0.0.1:1/none"))
    assert regrow.state(mod.total).options.store is not None
    assert mod.total.__name__ == "total"  # decorated; the store is reached at its first use, not here


def test_a_store_a_newer_regrow_migrated_leaves_the_function_healing_on_its_own(
        make_module, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A rolling upgrade: a newer regrow migrated the store; an old host must still start and heal."""
    db = tmp_path / "regrow.db"
    SQLiteStore(db).close()
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:  # (closed: 3.13 warns)
        connection.execute("INSERT INTO schema_version (version) VALUES (99)")
    mod = make_module(TOTAL.format(store=str(db)))  # imported: before, StoreError at decoration
    with caplog.at_level(logging.WARNING, logger="regrow"):
        assert mod.total([2, 3, 5]) == 10  # repaired here alone
    assert regrow.state(mod.total).last_result.ok
    assert "newer than this regrow" in caplog.text


class _Away(SQLiteStore):
    """A store whose first two takes find it away, as PostgreSQL during a restart."""

    misses = 0

    def take(self, holder, lease):  # type: ignore[no-untyped-def]
        if _Away.misses < 2:
            _Away.misses += 1
            raise StoreError("cannot reach the store: couldn't get a connection after 10.00 sec")
        return super().take(holder, lease)


def test_a_worker_waits_for_a_store_that_is_away(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Before, the worker died (PoolTimeout from take) on an outage of more than the pool's 10 s."""
    from regrow._service._worker import work

    store = _Away(tmp_path / "regrow.db")
    with caplog.at_level(logging.WARNING, logger="regrow"):
        assert work(store, until_idle=True, poll=0.01) == []  # it went on, and stopped once no job waited
    assert _Away.misses == 2 and caplog.text.count("cannot take a job") == 2
    store.close()


def test_a_store_that_gave_no_connection_is_given_half_a_second_at_its_next_uses() -> None:
    """docs/fleet.md: after a store gives no connection, its uses for the next 5 s wait at most half a second (each
    waited the whole connect_timeout before: six waits of 10 s for one failing call)."""
    from regrow._stores._postgres import GLANCE, PostgresStore

    store = PostgresStore("postgresql://nobody@127.0.0.1:1/none", lazy=True, connect_timeout=2.0)
    try:
        with pytest.raises(StoreError, match=r"after 2\.00 sec"):
            store.last_landing()  # the first use waits the whole connect_timeout
        with pytest.raises(StoreError, match=r"after 0\.50 sec"):
            store.last_landing()  # the next, a glance
        assert GLANCE == 0.5
    finally:
        store.close()


def test_a_store_that_refuses_the_connection_says_why(pg_server) -> None:  # type: ignore[no-untyped-def]
    """A database that does not exist (or a wrong password, a role the server does not know): the pool gives up
    with "pool initialization incomplete after 2.0 sec" and nothing more; the error now says what the server said too,
    opened at once and at the first use of a store opened lazily."""
    url = f"{pg_server.url}/no_such_database"
    with pytest.raises(StoreError, match=r'incomplete after 2\.0 sec: .*database "no_such_database" does not exist'):
        regrow.Store(url, connect_timeout=2.0)
    lazy = regrow.Store(url, lazy=True, connect_timeout=2.0)
    try:
        with pytest.raises(StoreError, match='database "no_such_database" does not exist'):
            lazy.reach()
    finally:
        lazy.close()

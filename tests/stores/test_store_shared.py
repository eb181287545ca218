"""Decorated functions that name one store share one open store (one pool of connections, not one each),
over both backends; a store object given is used as it is; a closed one is opened again."""

from __future__ import annotations

import pytest

import regrow
from regrow import Store
from regrow._stores import _shared

FUNCTIONS = '''
import regrow

@regrow.heal(store={url!r})
def one(a):
    return a

@regrow.heal(store={url!r})
def two(a):
    return a

@regrow.heal(store={url!r})
def three(a):
    return a

class Shop:
    @regrow.heal(store={url!r})
    def price(self, a):
        return a
'''


def _connections(url: str) -> int:
    """Sessions open on the store's database, this one left out."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND pid <> pg_backend_pid()").fetchone()
    assert row is not None
    return int(row[0])


def test_the_functions_that_name_one_store_share_it(store_url, make_module):
    mod = make_module(FUNCTIONS.format(url=store_url))
    stores = {id(regrow.state(fn).options.store) for fn in (mod.one, mod.two, mod.three, mod.Shop.price)}
    assert len(stores) == 1
    store = regrow.state(mod.one).options.store
    assert store is not None and not store.closed and mod.one(2) == 2
    if store_url.startswith("postgresql://"):
        assert _connections(store_url) == 1  # one pool of one connection, not one pool a function


def test_a_store_object_given_is_used_as_it_is(store_url, make_module):
    given = Store(store_url)
    try:
        healed = regrow.heal(store=given)(make_module("def same(a):\n    return a\n").same)
        assert regrow.state(healed).options.store is given
        assert _shared.shared(store_url) is not given  # never put among the shared ones
    finally:
        given.close()


def test_a_closed_store_is_opened_again_and_all_close_at_exit(store_url):
    first = _shared.shared(store_url)
    assert _shared.shared(store_url) is first
    first.close()
    again = _shared.shared(store_url)
    assert again is not first and not again.closed
    _shared.close_all()
    assert again.closed and _shared.shared(store_url) is not again


@pytest.mark.parametrize("name", ["regrow.db", "./regrow.db"])
def test_a_sqlite_file_is_one_store_however_its_path_is_written(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    assert _shared.shared(name) is _shared.shared(tmp_path / "regrow.db")


def test_one_database_is_one_store_however_its_url_is_spelled(store_url, tmp_path):
    if store_url.startswith("postgresql://"):
        other = "postgres://" + store_url.removeprefix("postgresql://")
    else:
        other = "sqlite://" + str(tmp_path / "regrow.db")
    assert _shared.shared(other) is _shared.shared(store_url)

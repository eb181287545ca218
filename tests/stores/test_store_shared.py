"""Decorated functions that name one store share one open store (one pool of connections, not one each),
over both backends; a store object given is used as it is; a closed one is opened again."""

from __future__ import annotations

import time

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
        # one pool of one connection, not one pool a function (made in the background: a store named by its location
        # is reached at its first use, never at decoration)
        seen = [_connections(store_url)]
        deadline = time.monotonic() + 30
        while seen[-1] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
            seen.append(_connections(store_url))
        assert seen[-1] == 1 and max(seen) == 1, seen


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


FORK_WHILE_OPENING = '''
import os, sys, threading, time
from pathlib import Path

import regrow._store  # noqa: F401 - the store backends, registered
from regrow._stores import _shared

folder = Path(sys.argv[1])
entered, release = threading.Event(), threading.Event()
real = _shared.Store


def slow(where, **options):  # another thread opening a store when the process forks (a connect can take 10 s)
    entered.set()
    release.wait(60)
    return real(where, **options)


_shared.Store = slow
opener = threading.Thread(target=_shared.shared, args=(folder / "parent.db",))
opener.start()
assert entered.wait(30)
_shared.Store = real
child = os.fork()
if child == 0:
    store = _shared.shared(folder / "child.db")
    print("child opened", store.schema_version() > 0, flush=True)
    os._exit(0)
deadline = time.monotonic() + 30
while os.waitpid(child, os.WNOHANG)[0] == 0:
    if time.monotonic() > deadline:
        print("child hung", flush=True)
        os.kill(child, 9)
        os.waitpid(child, 0)
        break
    time.sleep(0.02)
release.set()
opener.join()
'''


def test_a_process_forked_while_another_thread_opens_a_store_can_open_stores(tmp_path) -> None:
    """The lock ``shared`` holds while a store opens stays held in a child forked meanwhile (threads do not
    cross a fork, a lock another thread held does): each process takes a lock of its own."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "fork_while_opening.py"
    script.write_text(FORK_WHILE_OPENING)
    src = str(Path(__file__).parents[2] / "src")
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": src}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["child", "opened", "True"], (done.stdout, done.stderr)

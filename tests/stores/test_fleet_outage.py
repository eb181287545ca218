"""The PostgreSQL server stopped mid-run: processes keep their local behaviour (a local repair, or the
original exception), nothing crashes, nothing is lost (the sessions of the outage are written once the
store is back), and they use the store again once it is back (a real server of
the test's own, stopped and restarted on the same data; a real subprocess healing through it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import Server, _bindir

from regrow import Store

SHOP = '''
def total(values):
    result = 0
    for i in range(1, len(values) + 1):
        result += values[i]
    return result


def test_total(fn):
    assert fn([2, 3, 5]) == 10


def half(n):
    return n // 0


def test_half(fn):
    assert fn(4) == "never"


def count(values):
    seen = 0
    for i in range(1, len(values) + 1):
        seen += values[i] * 0 + 1
    return seen


def test_count(fn):
    assert fn([7, 8, 9]) == 3
'''

PROCESS = '''
import sys, time
from pathlib import Path

import regrow
import shop

store, folder = sys.argv[1], Path(sys.argv[2])
total = regrow.heal(tests=[shop.test_total], store=store)(shop.total)
half = regrow.heal(tests=[shop.test_half], store=store)(shop.half)
count = regrow.heal(tests=[shop.test_count], store=store)(shop.count)


def step(name):
    (folder / f"at-{name}").touch()
    while not (folder / name).exists():
        time.sleep(0.02)


step("down")
print("total", total([2, 3, 5]), flush=True)  # repaired here alone: the store is away
try:
    half(4)
except ZeroDivisionError:
    print("half raised ZeroDivisionError", flush=True)  # the original exception, as without a store
step("up")
print("count", count([7, 8, 9]), flush=True)  # the store is back: claimed, recorded, published
'''


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A PostgreSQL server of the test's own, to stop and start again on the same data."""
    request.getfixturevalue("pg_server")  # one line, and a failure in CI, without the server binaries
    bindir = _bindir()
    assert bindir is not None
    made = Server(bindir)
    try:
        yield made
    finally:
        made.stop()


def _at(folder: Path, name: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 600
    while not (folder / f"at-{name}").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"the process never reached {name}"
        time.sleep(0.05)


def test_a_process_keeps_its_local_behaviour_while_postgresql_is_down_and_uses_it_again_after(server, tmp_path):
    url = server.database()
    (tmp_path / "shop.py").write_text(textwrap.dedent(SHOP))
    (tmp_path / "process.py").write_text(textwrap.dedent(PROCESS))
    src = str(Path(__file__).parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(tmp_path)])}
    process = subprocess.Popen([sys.executable, str(tmp_path / "process.py"), url, str(tmp_path)],
                               cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _at(tmp_path, "down", process)
    server.pause()
    (tmp_path / "down").touch()
    _at(tmp_path, "up", process)
    server.resume()
    (tmp_path / "up").touch()
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    assert out.splitlines() == ["total 10", "half raised ZeroDivisionError", "count 3"], err
    # Said once per failure, in one line; the repair went on here (a store that is away is logged, never raised).
    assert "cannot be reached (" in err and "repairing total here alone" in err
    store = Store(url)
    try:
        recorded = {s["qualname"]: s for s in store.sessions()}
        assert recorded["count"]["ok"] and recorded["count"]["host"]  # the store is used again
        # Nothing is lost: the sessions run while it was away were kept and written once it was back,
        # with the time they ran.
        assert recorded["total"]["ok"] and not recorded["half"]["ok"]
        assert recorded["total"]["created"] < recorded["count"]["created"]
        assert store.claims() == []
    finally:
        store.close()


@pytest.mark.parametrize("steps", [1])
def test_the_test_server_keeps_its_data_across_a_pause(server, steps):
    url = server.database()
    store = Store(url)
    store.set_budget(spend_cap=1.5)
    store.close()
    for _ in range(steps):
        server.pause()
        server.resume()
    store = Store(url)
    try:
        assert store.spend_refusal("f", None) == ""
        store.spend("f", 1, 2.0)
        assert "spend cap of $1.5" in store.spend_refusal("f", None)
    finally:
        store.close()


def test_a_store_used_through_an_outage_answers_its_first_operation_after_the_server_is_back(server, monkeypatch):
    """psycopg_pool, left to itself, retries a lost server with a delay doubling from one second for five
    minutes: a store used throughout an outage (as the fleet listener uses it) went on failing long after the
    server was back. The store's pool gives up after :data:`RECONNECT`, so the next operation connects at once.
    (The library's first delay is scaled down to a tenth here, so the outage can be a few seconds long.)"""
    from psycopg_pool.base import AttemptWithBackoff

    from regrow._stores import _postgres

    monkeypatch.setattr(AttemptWithBackoff, "INITIAL_DELAY", 0.1)
    monkeypatch.setattr(_postgres, "RECONNECT", 0.1 * _postgres.RECONNECT)
    store = Store(server.database(), connect_timeout=2.0)
    try:
        store.set_budget(spend_cap=1.5)
        server.pause()
        # Used through the outage: every operation fails (after its 2 s wait), none is lost sight of.
        failed = 0
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            with pytest.raises(Exception):  # noqa: B017 - what the pool raises: PoolTimeout, an OperationalError
                store.spend_refusal("f", None)
            failed += 1
        assert failed >= 3
        server.resume()
        # The first operation after: answered (by the default policy, the pool's next try was ~4.6 s away).
        store.spend("f", 1, 2.0)
        assert "spend cap of $1.5" in store.spend_refusal("f", None)
    finally:
        store.close()

"""``regrow history`` on any host of a fleet: the store's sessions, jobs and installs, with the host of
each (both backends: a SQLite ledger read-only, a PostgreSQL store by its URL)."""

from __future__ import annotations

import io
import json

import pytest

from regrow import Store
from regrow._cli._main import main
from regrow._result import RepairResult
from regrow._stores._base import HOST


@pytest.fixture
def store(store_url):
    opened = Store(store_url)
    opened.record(RepairResult(False, "total", None, reason="no fix"), key=None)
    opened.submit({"target": "shop::total", "fingerprint": "fp", "args": ["L", []]})
    opened.installed("hash:fp:checks", "total", True, "proven")
    yield opened
    opened.close()


def _history(store_url: str, *words: str) -> str:
    out = io.StringIO()
    assert main(["history", "--store", store_url, *words], out) == 0
    return out.getvalue()


def test_history_shows_the_fleets_sessions_jobs_and_installs_with_their_host(store, store_url):
    sessions = json.loads(_history(store_url, "--json"))
    assert [(s["qualname"], s["ok"], s["host"]) for s in sessions] == [("total", False, HOST)]
    table = _history(store_url)
    assert "host" in table.splitlines()[0] and HOST in table and "no fix" in table
    jobs = json.loads(_history(store_url, "--jobs", "--json"))
    assert [(j["target"], j["state"], j["host"]) for j in jobs] == [("shop::total", "queued", HOST)]
    assert "capture" not in jobs[0]  # a job's arguments stay in the store
    assert "shop::total" in _history(store_url, "--jobs")
    installs = json.loads(_history(store_url, "--installs", "--json"))
    assert [(i["qualname"], i["ok"], i["host"]) for i in installs] == [("total", True, HOST)]
    assert installs[0]["ok"] is True  # JSON true on both backends (SQLite's said 1)
    assert "installed" in _history(store_url, "--installs")


def test_an_unreachable_fleet_store_is_a_one_line_error(capsys):
    assert main(["history", "--store", "postgresql://nobody@127.0.0.1:1/none"], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "regrow: error: cannot reach the store at" in err and "Traceback" not in err


def test_show_reads_one_session_with_its_verdicts_and_host_on_either_backend(store_url):
    from regrow import Candidate
    from regrow._verdict import Attempt, Verdict

    opened = Store(store_url)
    try:
        fixed = RepairResult(True, "total", None, fix=Candidate("def total(v):\n    return sum(v)\n", origin="engine"),
                             history=[Attempt(Candidate("def total(v):\n    return 0\n", origin="engine",
                                                        operator="const"), Verdict(False, "test_total", "0 != 10")),
                                      Attempt(Candidate("def total(v):\n    return sum(v)\n", origin="engine",
                                                        operator="call"), Verdict(True, "", ""))])
        number = opened.record(fixed, key=None)
    finally:
        opened.close()
    out = io.StringIO()
    assert main(["show", str(number), "--store", store_url, "--json"], out) == 0
    shown = json.loads(out.getvalue())
    assert (shown["qualname"], shown["ok"], shown["host"]) == ("total", True, HOST)
    assert [(v["operator"], v["ok"], v["check"]) for v in shown["verdicts"]] == [("const", False, "test_total"),
                                                                               ("call", True, "")]
    text = io.StringIO()
    assert main(["show", str(number), "--store", store_url], text) == 0
    assert f"on {HOST}" in text.getvalue() and "return sum(v)" in text.getvalue()
    assert main(["show", "999", "--store", store_url], io.StringIO()) == 2


def test_history_of_a_database_that_holds_no_store_says_so_and_writes_nothing(pg_url, capsys):
    """Before, ``regrow history`` migrated whatever database it was pointed at (ten regrow tables made in it) and
    said "the ledger holds no sessions", exit 0; a read-only role got a psycopg traceback."""
    import psycopg

    assert main(["history", "--store", pg_url], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "holds no regrow store" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    with psycopg.connect(pg_url) as connection:
        tables = connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    assert tables == []

"""The value of an argument named like a secret is masked where the exception quotes it too — the failure's
summary, message and traceback, the log, the events, the verdicts a repair stores — not only as a value."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

import regrow
import regrow.extend
from regrow._evidence._failure import capture_exception, check_failure

SECRET = "Hunter2SuperSecret"

LOGIN = '''
USERS = {"x": 1}


def test_login(fn):
    assert fn("alice", "x") == 1


def login(user, password):
    return USERS[password] + 0 * len(user)
'''


def test_a_secret_argument_quoted_by_the_exception_is_masked_in_the_failure(make_module) -> None:
    mod = make_module(LOGIN)
    with pytest.raises(KeyError) as raised:
        mod.login("alice", SECRET)
    failure = capture_exception(raised.value, mod.login, ("alice", SECRET), {})
    assert failure.arguments["password"] == "[REDACTED]"
    shown = failure.summary() + failure.message + failure.traceback + repr(failure)
    assert "KeyError" in shown and SECRET not in shown
    checked = check_failure("verify", mod.login, f"verify rejected {SECRET!r}", ("alice",), {"password": SECRET})
    assert SECRET not in checked.summary() + checked.reason
    headers = capture_exception(raised.value, mod.login, ("alice", {"Authorization": SECRET}), {})
    assert SECRET not in headers.message  # a secret-named key of a dict argument too


class _StillFails:
    """A proposer whose candidates fail the replay as the original did, quoting the password in their verdicts."""

    name = "mine"

    def propose(self, request):
        from regrow.extend import Candidate

        yield Candidate("def login(user, password):\n    return USERS[password] + 1\n", origin="mine")


def test_a_repair_stores_and_says_nothing_of_the_secret(make_module, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    mod = make_module(LOGIN)
    events: list[regrow.Event] = []
    store = tmp_path / "regrow.db"
    healed = regrow.heal(tests=[mod.test_login], store=str(store), on_event=events.append,
                         proposers=[_StillFails(), regrow.extend.Engine()])(mod.login)
    with caplog.at_level(logging.DEBUG, logger="regrow"), pytest.raises(KeyError):
        healed("alice", SECRET)  # no fix: a candidate must not return for an unknown password
    assert events and not [event for event in events if SECRET in repr(event)]
    assert "KeyError" in caplog.text and SECRET not in caplog.text
    with contextlib.closing(sqlite3.connect(store)) as connection:
        tables = [name for (name,) in connection.execute("select name from sqlite_master where type='table'")]
        rows = "".join(repr(row) for table in tables for row in connection.execute(f"select * from {table}"))
    assert "KeyError" in rows and SECRET not in rows


def test_a_module_global_named_like_a_secret_quoted_by_the_exception_is_masked(make_module) -> None:
    """The prompt masked the module's SERVICE_TOKEN; the log and the events (the failure's summary) did not."""
    mod = make_module('''
        SERVICE_TOKEN = "GLOBALTOKEN-55bb-0123"


        def port(host):
            return 5432 if not host else int(SERVICE_TOKEN)
    ''')
    with pytest.raises(ValueError) as raised:
        mod.port("x")
    failure = capture_exception(raised.value, mod.port, ("x",), {})
    assert "ValueError" in failure.summary() and "GLOBALTOKEN" not in failure.summary() + failure.traceback

"""A provider's error that quotes the API key it was sent never carries the key into what regrow keeps or shows:
the exception and its ledger, events, log records (tracebacks included) and the store."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import traceback
from pathlib import Path

import pytest
from llm_servers import OpenAIServer, Raw

import regrow

KEY = "sk-proj-REALKEY0123456789abcdefghij"  # what the user's environment holds
GATEWAY_KEY = "corp-gateway-key-0123456789"  # a key of no known shape, passed in code


def _echo(request) -> Raw:  # a gateway that answers 401 with the key it was sent, as many proxies do
    sent = request.headers.get("authorization", "").split()[-1]
    return Raw(401, {"error": {"message": f"Incorrect API key provided: {sent}", "type": "invalid_request_error"}})


INVERSE = """
def inverse(x):
    return 1 / x


def test_inverse(fn):
    assert fn(2) == 0.5 and fn(0) == 0.0
"""


@pytest.mark.parametrize("given", ["environment", "code"])
def test_a_key_the_provider_echoes_is_masked_everywhere(make_module, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture, given: str) -> None:
    from regrow.llm import proposer_for

    key = KEY if given == "environment" else GATEWAY_KEY
    events: list[regrow.Event] = []
    store = tmp_path / "regrow.db"
    with OpenAIServer([_echo] * 4) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key if given == "environment" else "sk-unused-000000000000")
        model = proposer_for("openai:gpt-5") if given == "environment" else proposer_for("openai:gpt-5", api_key=key)
        mod = make_module(INVERSE)  # (a function of its own: decorating one twice keeps the first options)
        healed = regrow.heal(tests=[mod.test_inverse], store=str(store), on_event=events.append, cooldown=0,
                             proposers=[model])(mod.inverse)  # the model alone: the engine would fix it first
        with caplog.at_level(logging.DEBUG, logger="regrow"), pytest.raises(ZeroDivisionError) as raised:
            healed(0)
        assert server.requests  # the model was asked, and answered with the key
    shown = "".join(traceback.format_exception(raised.value)) + str(regrow.ledger_of(raised.value))
    assert "HTTP 401" in shown and key not in shown
    assert not [event for event in events if key in repr(event)]
    assert "HTTP 401" in caplog.text and key not in caplog.text
    with contextlib.closing(sqlite3.connect(store)) as connection:
        tables = [name for (name,) in connection.execute("select name from sqlite_master where type='table'")]
        rows = "".join(repr(row) for table in tables for row in connection.execute(f"select * from {table}"))
    assert "HTTP 401" in rows and key not in rows

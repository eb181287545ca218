"""Issue 19: what comes back from a sandbox is clean — secrets masked by value (plain and encoded), control
characters out — before it reaches a verdict, an event, a log, the ledger or a model's next prompt."""

from __future__ import annotations

import base64
import logging
import textwrap
import types
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text
from test_plain_v3 import Forging

import regrow
from regrow._proposers._llm import proposer_for
from regrow._sandbox._scrub import Scrubber, known_secrets, register_secret, variants

SECRET = "live-9f8e7d6c5b4a3210"


def _encodings(secret: str) -> dict[str, str]:
    """How a candidate might send ``secret`` back, each inside a longer text."""
    raw = secret.encode()
    return {
        "plain": f"key={secret}!",
        "reversed": secret[::-1],
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "url": urllib.parse.quote("?" + secret + "&x", safe=""),
        **{f"base64+{shift}": base64.b64encode(b"p" * shift + raw + b"tail").decode() for shift in range(3)},
        **{f"urlsafe+{shift}": base64.urlsafe_b64encode(b"\xff" * shift + raw).decode() for shift in range(3)},
    }


def _forms(secret: str) -> list[str]:
    """What must never be seen: the secret, and each of its encodings' parts that carry it."""
    raw = secret.encode()
    return [secret, secret[::-1], raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode()[:12]]


@pytest.mark.parametrize("how", sorted(_encodings(SECRET)))
def test_a_secret_is_masked_in_every_encoding_at_every_alignment(how: str):
    scrub = Scrubber([SECRET])
    text = f"raised ValueError: {_encodings(SECRET)[how]}"
    cleaned = scrub(text)
    assert "[REDACTED]" in cleaned
    core = {"base64": base64.b64encode(SECRET.encode()).decode()[4:12]}
    assert all(form not in cleaned for form in [*_forms(SECRET), *core.values()])


def test_texts_without_a_secret_are_left_alone_and_control_characters_are_replaced():
    scrub = Scrubber([SECRET])
    assert scrub("raised KeyError: 'total'") == "raised KeyError: 'total'"
    dirty = "a\x1b]52;c;cHduZWQ=\x07b\x1b[2Jc\rd\x08e\u202ef\ud800g\u2066h"
    cleaned = scrub(dirty)
    assert not any(ch in cleaned for ch in "\x1b\x07\r\x08\u202e\ud800\u2066")
    assert cleaned.startswith("a?]52;c;") and cleaned.endswith("h")


def test_a_secret_cut_by_the_length_cap_leaves_no_part_behind():
    scrub = Scrubber([SECRET])
    for kept in range(1, len(SECRET)):
        assert SECRET[:kept] not in scrub("x" * (100 - kept) + SECRET, 100)


def test_the_host_knows_env_globals_dicts_and_registered_secrets(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PAYMENTS_API_TOKEN", "env-secret-123456")
    monkeypatch.setenv("AWS_CA_BUNDLE", __file__)  # a path named like a secret is not one
    register_secret("registered-secret-77")
    namespace = {"API_KEY": "module-secret-1", "DB_PASSWORD": b"bytes-secret", "author": "Ada Lovelace",
                 "CONFIG": {"token": "nested-secret-9", "host": "db.local"}, "SHORT_TOKEN": "abc"}
    known = known_secrets(namespace)
    assert {"env-secret-123456", "registered-secret-77", "module-secret-1", b"bytes-secret", "nested-secret-9"} <= known
    assert not {"Ada Lovelace", "db.local", "abc", __file__} & known


def test_bytes_secrets_and_their_forms():
    forms = variants(b"\x00\xffbytes-key")
    assert b"\x00\xffbytes-key".hex() in forms
    assert any(base64.b64encode(b"\x00\xffbytes-key").decode()[:12] in form for form in forms)


# -- through repair(): a candidate sends the target's API_KEY back, encoded --------------------------------


def _leaky_module(make_module: Callable[[str], types.ModuleType], tmp_path: Path) -> types.ModuleType:
    (tmp_path / "key.txt").write_text(SECRET)
    candidates = [
        f"def total(rows: list) -> int:\n    raise ValueError({expression})\n"
        for expression in (
            "base64.b64encode(API_KEY.encode()).decode()",
            "base64.urlsafe_b64encode(b'xy' + API_KEY.encode()).decode()",
            "API_KEY.encode().hex()",
            "API_KEY[::-1]",
            "urllib.parse.quote('?' + API_KEY)",
            "'\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J' + API_KEY",
        )
    ]
    return make_module(f'''
        import base64
        import urllib.parse
        from pathlib import Path
        from scripted import Scripted

        API_KEY = (Path(__file__).parent / "key.txt").read_text()
        PROPOSER = Scripted(*{candidates!r})

        def total(rows: list) -> int:
            if rows is None:  # the original uses the key and the encoders too, so a candidate may (capabilities)
                return [base64.b64encode(API_KEY.encode()), base64.urlsafe_b64encode(b""), urllib.parse.quote("")]
            return sum(rows) + None  # the bug
    ''')


def _seen(result: regrow.RepairResult, events: list[regrow.Event], caplog: pytest.LogCaptureFixture,
          store: Path, captured: Any) -> str:
    """Every text the repair left where a person, a program or a model reads it."""
    texts = [result.ledger(limit=50), result.reason, *(a.verdict.reason for a in result.history)]
    texts += [f"{e.message} {e.verdict.reason if e.verdict else ''}" for e in events]
    texts += [record.getMessage() for record in caplog.records]
    texts += [path.read_text(errors="replace") for path in store.rglob("*") if path.is_file()]
    texts += [captured.out, captured.err]
    return "\n".join(texts)


def test_a_secret_sent_back_encoded_reaches_no_reason_event_log_or_ledger(make_module, tmp_path: Path,
                                                                           caplog: pytest.LogCaptureFixture, capfd):
    mod = _leaky_module(make_module, tmp_path)
    events: list[regrow.Event] = []
    caplog.set_level(logging.DEBUG, logger="regrow")
    result = regrow.repair(mod.total, ([1, 2, 3],), verify=lambda n: n == 6, proposers=[mod.PROPOSER],
                           sandbox="fork", on_event=events.append, store=tmp_path / "store", install=False)
    seen = _seen(result, events, caplog, tmp_path / "store", capfd.readouterr())
    assert len(result.history) == 6 and all("[REDACTED]" in a.verdict.reason for a in result.history)
    assert not [form for form in _forms(SECRET) if form in seen]
    assert "\x1b" not in seen


def test_an_escape_sequence_in_a_reason_the_host_made_never_reaches_stderr(make_module, tmp_path: Path, capfd,
                                                                          caplog: pytest.LogCaptureFixture):
    mod = _leaky_module(make_module, tmp_path)
    hostile = ["X", "ValueError", [["S", "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31mred\r" + SECRET[::-1]]]]
    result = regrow.repair(mod.total, ([1, 2, 3],), verify=lambda n: n == 6,
                           proposers=[types.SimpleNamespace(name="scripted", propose=_genuine)],
                           sandbox=Forging(hostile), install=False)
    seen = _seen(result, [], caplog, tmp_path / "none", capfd.readouterr())
    assert not result.ok and "not confirmed outside the sandbox" in result.history[0].verdict.reason
    assert "\x1b" not in seen and "\r" not in seen and SECRET[::-1] not in seen


def _genuine(request: Any) -> Iterator[regrow.Candidate]:
    yield regrow.Candidate("def total(rows: list) -> int:\n    return sum(rows)\n", origin="scripted")


def test_the_next_prompt_never_sees_the_secret(make_module, tmp_path: Path):
    mod = _leaky_module(make_module, tmp_path)
    leak = ("```python\ndef total(rows: list) -> int:\n"
            "    raise ValueError(base64.b64encode(API_KEY.encode()).decode())\n```")
    right = "```python\ndef total(rows: list) -> int:\n    return sum(rows)\n```"
    with OpenAIServer() as server:
        server.add(Text(leak), Text(right))
        model = proposer_for("openai:gpt-test", api_key="test-key", base_url=server.base_url)
        result = regrow.repair(mod.total, ([1, 2, 3],), verify=lambda n: n == 6, proposers=[model],
                               sandbox="fork", install=False)
        prompts = [request.prompt for request in server.requests]
    assert result.ok and len(prompts) == 2
    assert "[REDACTED]" in prompts[1]
    assert not [form for form in _forms(SECRET) if form in prompts[1]]


def test_a_key_passed_in_code_is_registered(make_module):
    proposer_for("openai:gpt-test", api_key="code-key-0a1b2c3d", base_url="http://127.0.0.1:9")
    assert "code-key-0a1b2c3d" in known_secrets({})
    assert textwrap.shorten(Scrubber.of({})("code-key-0a1b2c3d"), 40) == "[REDACTED]"

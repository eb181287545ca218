"""The secret corpus: every secret placed where evidence is taken from, and none of it anywhere it goes —
the prompt, the capture files, the events, the log records, the issue body. And the precision corpus:
harmless names and values shown as they are."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow
from regrow._delivery._keep import issue_body, record_of
from regrow._proposers._llm import RetryPolicy, proposer_for

FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)
# Each secret is unique, so a leak names its placement.
SHAPED = {
    "openai": "sk-proj-{n}abcdefghijklmnopqrstuv",
    "github": "ghp_{n}abcdefghijklmnopqrstuvwxyz01",
    "slack": "xoxb-{n}-abcdefghijkl",
    "aws": "AKIA{n:0>16}",
    "jwt": "eyJhbGciOi{n}JIUzI1.eyJzdWIiOi{n}IxMjM0.SflKxwRJSM{n}eKKF2QT4",
    "bearer": "Bearer tok{n}abcdefghijklmnop",
}
NAMED = ["password", "api_key", "auth_token", "client_secret", "session_id", "db_passwd", "privateKey", "X-Api-Key"]


def secrets() -> Iterator[str]:
    n = 100
    while True:
        n += 1
        yield f"hunter{n}-{n}q"


@dataclasses.dataclass
class Credentials:
    user: str
    password: str


class Model:  # pydantic-style: fields in __dict__
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class LeakyError(Exception):
    def __init__(self, message: str, token: str, response: dict[str, Any]) -> None:
        super().__init__(message)
        self.token = token
        self.response = response


def corpus() -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """The arguments of one failing call, every secret placed in them, and environment variables."""
    fresh = secrets()
    placed: list[str] = []

    def named_secret() -> str:
        value = next(fresh)
        placed.append(value)
        return value

    def shaped(kind: str, n: int) -> str:
        value = SHAPED[kind].format(n=n)
        placed.append(value.removeprefix("Bearer "))
        return value

    arguments: dict[str, Any] = {}
    for name in NAMED:  # secret names at the top level, in nested dicts, lists, headers
        key = name.replace("-", "_")
        arguments[key] = named_secret()
        arguments.setdefault("config", {})[name] = named_secret()
        arguments.setdefault("nested", {"level": {}})["level"][name] = named_secret()
        arguments.setdefault("headers", {})[name] = named_secret()
    for i, kind in enumerate(SHAPED):  # secrets by shape under harmless names, in text, bytes and lists
        arguments[f"note_{kind}"] = f"see {shaped(kind, i)} here"
        arguments.setdefault("items", []).append(shaped(kind, i + 10))
        arguments[f"raw_{kind}"] = f"value={shaped(kind, i + 20)}".encode()
    arguments["accounts"] = [{"user": f"u{i}", "password": named_secret()} for i in range(4)]  # dicts in lists
    url_pw = named_secret()
    arguments["url"] = f"postgres://app:{url_pw}@db.example.com/app"
    arguments["creds"] = Credentials("ann", named_secret())
    arguments["model"] = Model(user="bob", api_key=named_secret(), note=f"k={shaped('openai', 40)}")
    env = {"APP_TOKEN": named_secret(), "APP_DSN": f"redis://:{named_secret()}@cache/0",
           "APP_NOTE": shaped("github", 41)}
    return arguments, placed, env


SOURCE = '''
import logging
import regrow

log = logging.getLogger("shop.payments")

def rupees(fn):
    assert fn("₹1,299", **CALL) == 1299.0

def pay(text, **evidence):
    local_secret_copy = evidence["password"]
    regrow.capture("pay")
    log.warning("paying with password=%s and %s", evidence["password"], evidence["note_openai"])
    try:
        raise KeyError("inner token=" + evidence["auth_token"])
    except KeyError as inner:
        raise LeakyError("charge failed for " + evidence["url"], evidence["api_key"],
                         {"Authorization": evidence["headers"]["X-Api-Key"]}) from inner
'''


@pytest.fixture
def setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[dict[str, Any], list[str]]]:
    arguments, placed, env = corpus()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    previous = regrow.configure_evidence(regrow.EvidencePolicy(
        env_allowlist=tuple(env), frames=True, capture_dir=tmp_path / "captures",
        issue=regrow.Sections()))  # the issue gets everything too: the hardest case
    regrow.enable_log_capture(size=200, level=logging.INFO)
    yield arguments, placed
    regrow.disable_log_capture()
    regrow.configure_evidence(previous)


def test_no_secret_of_the_corpus_leaks_anywhere(setting: tuple[dict[str, Any], list[str]], make_module: Any,
                                               tmp_path: Path) -> None:
    arguments, placed = setting
    assert len(placed) >= 60
    mod = make_module(SOURCE)
    mod.LeakyError, mod.CALL = LeakyError, arguments
    events: list[regrow.Event] = []
    logged = io.StringIO()
    handler = logging.StreamHandler(logged)
    logging.getLogger().addHandler(handler)
    try:
        with OpenAIServer() as server:
            server.add(*[Text("```python\ndef pay(text, **evidence):\n    return 1.0\n```")] * 3)
            llm = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST)
            healed = regrow.heal(tests=[mod.rupees], proposers=[llm], on_event=events.append, max_attempts=1)(mod.pay)
            with pytest.raises(LeakyError):
                healed("₹1,299", **arguments)
            prompts = [json.dumps(request.body) for request in server.requests]
    finally:
        logging.getLogger().removeHandler(handler)
    paths = sorted((tmp_path / "captures").glob("*.json"))
    assert paths and prompts
    path = paths[-1]
    state = regrow.state(healed)
    assert state.last_result is not None and state.last_result.failure is not None
    body = issue_body(record_of(state.target, state.last_result), "full")
    destinations = {
        "prompt": "\n".join(prompts),
        "disk": path.read_text(),
        "events": "\n".join(repr(event) for event in events),
        "regrow logs": "\n".join(line for line in logged.getvalue().splitlines() if "paying with" not in line),
        "issue": body,
        "failure": repr(state.last_result.failure.disclosed("provider")),
    }
    assert "## Log records of the failing call" in destinations["prompt"]  # the evidence did get there
    assert "LeakyError" in body and "APP_TOKEN = [REDACTED]" in body  # the issue got the evidence, masked
    leaks = [(where, secret) for where, text in destinations.items() for secret in placed if secret in text]
    assert leaks == []


PRECISION = {"author": "ann", "tokenizer": "bpe", "monkey": "george", "passenger": "seat 12A",
             "max_tokens": 512, "commit": "3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a",
             "request_id": "12345678-1234-5678-1234-567812345678", "passage": "the quick brown fox",
             "keyboard": "qwerty", "token_count": 12, "bypass": "no", "compass": "north",
             "sha": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}


def test_harmless_names_and_values_are_not_redacted(make_module: Any) -> None:
    mod = make_module('''
        def describe(**fields):
            summary = " ".join(f"{k}={v}" for k, v in fields.items())
            raise ValueError("bad record: " + summary)
    ''')
    from regrow._evidence._failure import capture_exception

    try:
        mod.describe(**PRECISION)
    except ValueError as exc:
        failure = capture_exception(exc, mod.describe, (), PRECISION)
    shown = failure.arguments["fields"] + failure.message + failure.locals["summary"]
    assert "[REDACTED]" not in shown
    for value in PRECISION.values():
        assert str(value) in shown

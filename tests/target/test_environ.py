"""Configuration the function reads is there when its candidates run, and never reaches an output.

A function that reads ``DATABASE_URL`` is healed in the fork sandbox (the engine, a scripted proposer, a
model on loopback), while its value — plain, base64, hex, reversed — is in no prompt, event, log line or
ledger row; a variable it does not read is still removed in the child; a read through a computed name
ends with a reason that names the withheld variable and how to allow it.
"""

from __future__ import annotations

import ast
import importlib
import logging
import os
import sys
import textwrap
import types
import uuid
from pathlib import Path

import pytest
from llm_servers import OpenAIServer, Text
from scripted import Scripted

import regrow
from regrow._events import Event
from regrow._proposers._llm import RetryPolicy, proposer_for
from regrow._sandbox import ForkSandbox, Limits
from regrow._secrets import variants
from regrow._target._environ import kept, reads_of, scan, withheld_note

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork sandbox needs os.fork")

URL = "postgresql://app:s3cr3t-pw@db.internal/app"
PLAIN = "db-primary.internal:5432/app"  # configuration no shape rule sees: only its name says it is secret
OTHER = "ghp_" + "Z" * 8 + "otherTokenNotRead123"
FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)

BUGGY = '''
import os

def database_name(suffix):
    url = os.environ["DATABASE_URL"]
    name = url[url.rindex("/") + 1:]
    return name + suffix[len(suffix)]
'''


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", URL)
    monkeypatch.setenv("OTHER_API_TOKEN", OTHER)


def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> types.ModuleType:
    """A real module of the user's, written to a file and imported (a fresh name each time)."""
    name = f"envapp_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def leaked(text: str, value: str = URL) -> list[str]:
    """The forms of the secret (plain, base64, hex, reversed, …) and of its password found in ``text``."""
    return sorted(form for form in variants(value) | variants("s3cr3t-pw") if form in text)


def store_text(path: Path) -> str:
    """Every byte of the store's database (and its journal), as text."""
    return "".join(file.read_bytes().decode("latin-1") for file in path.parent.iterdir() if file.is_file())


# -- what the module reads -------------------------------------------------------------------------


def test_the_scan_finds_each_way_of_reading_a_variable_and_says_which_it_cannot_name() -> None:
    reads = scan(ast.parse(textwrap.dedent('''
        import os as system
        from os import environ as env, getenv
        KEY = "DATABASE_URL"

        def f(x):
            system.environ["A_TOKEN"], system.environ.get("B"), system.getenv("C"), getenv("D")
            env.setdefault("E", "1"), system.environ[KEY], "H" in env
            system.environ["WRITTEN"] = "1"
            return system.environ[x + "_URL"], dict(env)
    ''')))
    assert reads.names == ("A_TOKEN", "B", "C", "D", "E", "DATABASE_URL", "H")
    assert reads.computed == ("system.environ[x + '_URL'] (line 10)", "env, the whole environment (line 10)")


def test_keeping_can_be_turned_off_or_widened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = load(tmp_path, monkeypatch, BUGGY)
    assert reads_of(module.database_name).names == ("DATABASE_URL",)
    assert kept(module.database_name) == ("DATABASE_URL",)
    assert kept(module.database_name, False) == ()
    assert kept(module.database_name, ["AWS_REGION"]) == ("AWS_REGION", "DATABASE_URL")
    with pytest.raises(TypeError, match="list of names"):
        kept(module.database_name, "DATABASE_URL")


# -- the sandbox child -----------------------------------------------------------------------------


def _environment() -> dict[str, str]:
    return dict(os.environ)


def test_the_child_keeps_only_the_variables_named(env: None) -> None:
    sandbox = ForkSandbox()
    try:
        kept_ = sandbox.call(_environment, limits=Limits(environ_keep=("DATABASE_URL",)))
        default = sandbox.call(_environment, limits=Limits())
    finally:
        sandbox.close()
    assert kept_.ok and default.ok, (kept_.reason(), default.reason())
    assert kept_.value["DATABASE_URL"] == URL
    assert "OTHER_API_TOKEN" not in kept_.value  # a secret the function does not read is still removed
    assert "DATABASE_URL" not in default.value and "OTHER_API_TOKEN" not in default.value


# -- healing -----------------------------------------------------------------------------------------


def test_the_engine_heals_a_function_that_reads_database_url(env: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    module = load(tmp_path, monkeypatch, BUGGY)
    events: list[Event] = []
    caplog.set_level(logging.DEBUG, logger="regrow")
    store = tmp_path / "store" / "regrow.db"
    # (a suffix of one character: its first and its last would both pass, and the engine would abstain)
    result = regrow.repair(module.database_name, ("ab-",), verify=lambda value: value == "app-", proposers=None,
                           on_event=events.append, store=store, timeout=120.0)
    assert result.ok, result.reason
    assert result.value == "app-" and module.database_name("+") == "app+"
    assert not leaked("\n".join(repr(event) for event in events))
    assert not leaked(caplog.text)
    assert not leaked(store_text(store))


def test_a_scripted_candidate_runs_with_database_url_and_without_the_other_secret(
        env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = load(tmp_path, monkeypatch, BUGGY)
    # The candidate itself asserts, in the child, that the secret its module does not read is gone.
    fix = '''
        def database_name(suffix):
            url = os.environ["DATABASE_URL"]
            assert "OTHER_API_TOKEN" not in os.environ, "the other secret reached the child"
            name = url[url.rindex("/") + 1:]
            return name + suffix[len(suffix) - 1]
    '''
    result = regrow.repair(module.database_name, ("-",), verify=lambda value: value == "app-",
                           proposers=[Scripted(fix)], install=False, timeout=120.0)
    assert result.ok, result.reason
    assert result.history[-1].candidate.origin == "scripted"


@pytest.mark.parametrize("value", [URL, PLAIN])
def test_a_models_prompt_never_holds_the_value(value: str, env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("DATABASE_URL", value)
    module = load(tmp_path, monkeypatch, BUGGY)
    events: list[Event] = []
    caplog.set_level(logging.DEBUG, logger="regrow")
    store = tmp_path / "store" / "regrow.db"
    reply = ('```python\ndef database_name(suffix):\n    url = os.environ["DATABASE_URL"]\n'
             '    name = url[url.rindex("/") + 1:]\n    return name + suffix[-1]\n```')
    with OpenAIServer() as server:
        server.add(Text(reply))
        model = proposer_for("openai:gpt-test", api_key="k", base_url=server.base_url, retry=FAST)
        result = regrow.repair(module.database_name, ("-",), verify=lambda value: value == "app-",
                               proposers=[model], on_event=events.append, store=store, timeout=120.0)
        prompts = [request.text + request.prompt for request in server.requests]
    assert result.ok, result.reason
    assert prompts and "database_name" in prompts[0]
    assert "## Locals of the failing frame" in prompts[0]  # where the value would be: the local ``url``
    assert not any(leaked(prompt, value) for prompt in prompts), [leaked(prompt, value) for prompt in prompts]
    assert not leaked("\n".join(repr(event) for event in events), value)
    assert not leaked(caplog.text, value)
    assert not leaked(store_text(store), value)


def test_a_read_through_a_computed_name_gets_a_reason_that_names_the_withheld_variable(
        env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = load(tmp_path, monkeypatch, '''
        import os
        SERVICE = "DATABASE"

        def database_name(suffix):
            url = os.environ[SERVICE + "_URL"]
            name = url[url.rindex("/") + 1:]
            return name + suffix[len(suffix)]
    ''')
    fix = '''
        def database_name(suffix):
            url = os.environ[SERVICE + "_URL"]
            name = url[url.rindex("/") + 1:]
            return name + suffix[len(suffix) - 1]
    '''
    result = regrow.repair(module.database_name, ("-",), verify=lambda value: value == "app-",
                           proposers=[Scripted(fix)], install=False, timeout=120.0)
    assert not result.ok
    assert result.reason.startswith("every candidate failed without DATABASE_URL, which the sandbox withheld")
    assert "environ=['DATABASE_URL']" in result.reason
    assert URL not in result.reason


def test_the_reason_names_a_variable_read_by_name_when_keeping_is_off(env: None) -> None:
    reads = scan(ast.parse('import os\nos.environ.get("DATABASE_URL")\n'))
    note = withheld_note("every proposer ran out of candidates", "f", [], 0, 3, reads, ())
    assert note == ("every proposer ran out of candidates; the sandbox withheld DATABASE_URL, which f reads (named "
                    "like a secret), from every candidate: allow it with environ=['DATABASE_URL']")
    assert withheld_note("why", "f", [], 0, 3, reads, ("DATABASE_URL",)) == "why"  # kept: nothing to say


def test_repair_and_heal_take_environ(env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The knob through the front-ends (the one assembly): off, the session names what it withheld."""
    module = load(tmp_path, monkeypatch, BUGGY)
    fix = '''
        def database_name(suffix):
            url = os.environ["DATABASE_URL"]
            name = url[url.rindex("/") + 1:]
            return name + suffix[len(suffix) - 1]
    '''
    off = regrow.repair(module.database_name, ("-",), verify=lambda value: value == "app-",
                        proposers=[Scripted(fix)], install=False, environ=False, timeout=120.0)
    assert not off.ok and "DATABASE_URL" in off.reason and "environ=" in off.reason, off.reason
    assert URL not in off.reason
    on = regrow.repair(module.database_name, ("-",), verify=lambda value: value == "app-",
                       proposers=[Scripted(fix)], install=False, environ=["EXTRA_NAME"], timeout=120.0)
    assert on.ok, on.reason
    with pytest.raises(TypeError, match="environ="):
        regrow.heal(environ="DATABASE_URL")  # type: ignore[call-overload]

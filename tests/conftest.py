"""Shared fixtures: user modules written to a temporary folder and imported as users import them."""

from __future__ import annotations

import itertools
import os
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from regrow._heal._live import SESSIONS
from regrow._proposers._llm._accounting import PROCESS
from regrow._target._locate import import_path

# langchain-core (a dev extra, for the agent tools' tests) brings langsmith, whose pytest plugin costs
# about a second of CPU at every pytest start; the suite starts hundreds (`regrow heal`, the plugin's
# tests), none of which is about it. Every pytest this suite starts leaves it out.
os.environ["PYTEST_ADDOPTS"] = " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS"), "-p no:langsmith_plugin"]))

pytest_plugins = ["pg_server"]  # a real PostgreSQL server for the store tests (tests/pg_server.py)

_serial = itertools.count()


@pytest.fixture(autouse=True)
def _fresh_session_cap() -> Iterator[None]:
    """Each test starts a new minute for @heal's process-wide cap on sessions (sessions_per_minute=), and a
    new hour for the model proposers' process-wide calls per failure (max_calls_per_failure_per_hour=): a
    test's calls are its own, whatever ran before it."""
    SESSIONS.clear()
    PROCESS.reset()
    yield
    # The stores a test's functions opened by their location, and the listeners on them, closed after it: a store is
    # reached at its first use, and one left open (a pool retrying an unreachable server, a SQLite connection per
    # thread) held descriptors beside every later test of the session (a sandbox child's result pipe then got a
    # descriptor past the 63 its channel tests look at).
    from regrow._heal import _fleet_listen
    from regrow._stores import _shared

    _fleet_listen.stop(timeout=10)
    _shared.close_all()


@pytest.fixture
def make_module(tmp_path: Path) -> Iterator[Callable[[str], types.ModuleType]]:
    """Write ``source`` to a fresh module file and import it under its own name."""
    made: list[str] = []

    def make(source: str) -> types.ModuleType:
        name = f"usermod_{next(_serial)}"
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        made.append(name)
        return import_path(path)

    yield make
    for name in made:
        sys.modules.pop(name, None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


@pytest.fixture
def openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A scripted OpenAI server on loopback that a ``model="openai:…"`` string reaches, configured the way a
    user configures the SDK (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)."""
    from llm_servers import OpenAIServer

    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-for-the-loopback-0000")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server

"""Issue 19: one sandbox for every front-end.

``regrow heal --model …`` (and the pytest plugin, the MCP server and the agent tools, which all run
a heal through the CLI's ``run_heal``) proves a model's candidates in the same sandbox as ``@heal``
and ``repair()``: a guarded fork where the platform has one. The engine's own edits keep their
in-process fast path. So does the benchmark harness.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow._session
from regrow._cli import main
from regrow._evaluate import evaluate
from regrow._options import default_sandbox
from regrow._sandbox import ForkSandbox, InProcessSandbox
from regrow._session import Session
from regrow._target import Target

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="the fork sandbox needs os.fork")

MODULE = '''\
def parse_toll(text):
    return float(text.replace("$", ""))
'''
TESTS = '''\
from toll_frontend import parse_toll


def test_rupees():
    assert parse_toll("\u20b91,299") == 1299.0


def test_dollars():
    assert parse_toll("$5") == 5.0
'''
REPLY = ('```python\nimport re\n\ndef parse_toll(text):\n'
         '    return float(re.sub(r"[^0-9.]", "", text))\n```\n')


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toll_frontend.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "test_toll_frontend.py").write_text(TESTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in ("toll_frontend", "test_toll_frontend"):
        sys.modules.pop(name, None)


def test_the_cli_proves_a_models_candidates_in_the_fork_sandbox(project: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[tuple[str, str]] = []  # (origin, the sandbox class that judged it)
    prove = regrow._session.prove

    def spy(target: Any, candidate: Any, checks: Any, sandbox: Any, *args: Any, **kwargs: Any) -> Any:
        judged.append((candidate.origin, type(sandbox).__name__))
        return prove(target, candidate, checks, sandbox, *args, **kwargs)

    monkeypatch.setattr(regrow._session, "prove", spy)
    forked: list[object] = []  # what the fork sandbox ran: an evaluation of a candidate's checks per proof
    call = ForkSandbox.call

    def counted(self: ForkSandbox, fn: Any, *args: Any, **kwargs: Any) -> Any:
        forked.append(fn)
        return call(self, fn, *args, **kwargs)

    monkeypatch.setattr(ForkSandbox, "call", counted)
    out = io.StringIO()
    with OpenAIServer() as server:
        server.add(Text(REPLY))
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        status = main(["heal", "toll_frontend.py::parse_toll", "--test", "test_toll_frontend.py", "--model",
                       "openai:gpt-test", "--timeout", "120", "--candidate-timeout", "30", "-q", "--no-copy"], out)
    assert status == 0, out.getvalue()
    assert "fixed by openai:gpt-test" in out.getvalue()
    assert [sandbox for origin, sandbox in judged if origin == "openai:gpt-test"] == ["ForkSandbox"], judged
    assert all(sandbox == "InProcessSandbox" for origin, sandbox in judged if origin == "engine"), judged
    assert forked.count(evaluate) == 2  # proven twice, the second time in a fresh child, as any model fix


def _broken(x: int) -> int:
    return x // 0


def test_a_session_proves_untrusted_candidates_in_the_default_sandbox_unless_told() -> None:
    def session(**sandboxes: Any) -> Session:
        return Session(Target.of(_broken), None, [], [], **sandboxes)  # type: ignore[arg-type]

    plain = session()
    assert isinstance(plain.sandbox, ForkSandbox) and isinstance(plain.engine_sandbox, InProcessSandbox)
    shared, fast = default_sandbox(), InProcessSandbox()
    told = session(sandbox=shared, engine_sandbox=fast)
    assert told.sandbox is shared and told.engine_sandbox is fast
    assert session(sandbox=shared).engine_sandbox is shared  # a sandbox given is every candidate's

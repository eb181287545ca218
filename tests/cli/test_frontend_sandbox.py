"""Issues 19 and 20: one sandbox and one policy for every front-end.

Every front-end runs a repair through the one assembly (``regrow._heal._assembly.run_repair``): ``regrow
heal --model …``, the pytest plugin (which runs ``regrow heal``), the MCP server and the agent tools
(whose worker builds the heal's request), and the benchmark harness prove a model's candidates in the
same sandbox as ``@heal`` and ``repair()`` (a guarded fork where the platform has one) and run the
no-oracle policy (with the tests as the oracle). The engine's own edits keep their in-process fast path.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_servers import OpenAIServer, Text

import regrow._heal._assembly
import regrow._session._loop
from regrow._checks._evaluate import evaluate
from regrow._cli._bench._manifest import Task
from regrow._cli._bench._task import run_task
from regrow._cli._main import main
from regrow._heal._options import default_sandbox
from regrow._sandbox import ForkSandbox, InProcessSandbox
from regrow._session._loop import Session
from regrow._target._target import Target

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
# After the engine, a model's first call is a locate request (test_llm_locate.py): it names no place here, and
# the rewrite request after it gets the fix.
SCRIPT = [lambda request: Text("no place" if "JSON only" in request.prompt else REPLY)] * 2


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toll_frontend.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "test_toll_frontend.py").write_text(TESTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in ("toll_frontend", "test_toll_frontend"):
        sys.modules.pop(name, None)


SPY = Path(__file__).parents[1] / "spy"  # a sitecustomize that records the same in the processes a front-end starts
MODEL = "openai:gpt-test"


def spy_in_process(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[str, str]], list[bool]]:
    """Which sandbox proved each candidate (origin, sandbox class), and the oracle of each policy run."""
    judged: list[tuple[str, str]] = []
    policies: list[bool] = []
    prove, prepare = regrow._session._loop.prove, regrow._heal._assembly.admit

    def spy(target: Any, candidate: Any, checks: Any, sandbox: Any, *args: Any, **kwargs: Any) -> Any:
        judged.append((candidate.origin, type(sandbox).__name__))
        return prove(target, candidate, checks, sandbox, *args, **kwargs)

    def policy(*args: Any, **kwargs: Any) -> Any:
        policies.append(kwargs["oracle"])
        return prepare(*args, **kwargs)

    monkeypatch.setattr(regrow._session._loop, "prove", spy)
    monkeypatch.setattr(regrow._heal._assembly, "admit", policy)
    return judged, policies


def spy_in_children(tmp_path: Path, server: OpenAIServer) -> tuple[dict[str, str], Path]:
    """The environment of a front-end's subprocesses: the scripted model, and the spy recording into a file."""
    record = tmp_path / "spy.jsonl"
    paths = [str(SPY), str(Path(regrow.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "REGROW_SPY": str(record), "PYTHONPATH": os.pathsep.join(p for p in paths if p),
           "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.base_url, "PYTHONDONTWRITEBYTECODE": "1"}
    return env, record


def spied(record: Path) -> tuple[list[tuple[str, str]], list[bool]]:
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    judged = [(line["origin"], line["sandbox"]) for line in lines if line["kind"] == "prove"]
    return judged, [line["oracle"] for line in lines if line["kind"] == "policy"]


def assert_one_sandbox(judged: list[tuple[str, str]], policies: list[bool]) -> None:
    """A model's candidate proven in the fork sandbox, the engine's in process, after the policy ran with the
    tests as the oracle."""
    assert [sandbox for origin, sandbox in judged if origin == MODEL] == ["ForkSandbox"], judged
    assert all(sandbox == "InProcessSandbox" for origin, sandbox in judged if origin == "engine"), judged
    assert policies == [True], policies


def test_the_cli_proves_a_models_candidates_in_the_fork_sandbox(project: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    judged, policies = spy_in_process(monkeypatch)
    forked: list[object] = []  # what the fork sandbox ran: an evaluation of a candidate's checks per proof
    call = ForkSandbox.call

    def counted(self: ForkSandbox, fn: Any, *args: Any, **kwargs: Any) -> Any:
        forked.append(fn)
        return call(self, fn, *args, **kwargs)

    monkeypatch.setattr(ForkSandbox, "call", counted)
    out = io.StringIO()
    with OpenAIServer() as server:
        server.add(*SCRIPT)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        status = main(["heal", "toll_frontend.py::parse_toll", "--test", "test_toll_frontend.py", "--model",
                       "openai:gpt-test", "--timeout", "120", "--candidate-timeout", "30", "-q", "--no-copy"], out)
    assert status == 0, out.getvalue()
    assert "fixed by openai:gpt-test" in out.getvalue()
    assert_one_sandbox(judged, policies)
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


def test_the_bench_proves_a_models_candidates_in_the_fork_sandbox(project: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    judged, policies = spy_in_process(monkeypatch)
    task = Task("toll", "toll_frontend.py::parse_toll", ["test_toll_frontend.py"], str(project))
    with OpenAIServer() as server:
        server.add(*SCRIPT)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = run_task(task, proposer="engine+llm", model=MODEL, timeout=120.0)
    assert result["status"] == "fixed", result
    assert_one_sandbox(judged, policies)


def test_the_plugin_proves_a_models_candidates_in_the_fork_sandbox(project: Path, tmp_path: Path) -> None:
    marked = TESTS.replace("\ndef test_", '\n@pytest.mark.heal(target="toll_frontend.parse_toll")\ndef test_')
    (project / "test_toll_frontend.py").write_text("import pytest\n" + marked, encoding="utf-8")
    with OpenAIServer() as server:
        server.add(*SCRIPT)
        env, record = spy_in_children(tmp_path, server)
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--heal", "--heal-model",
                               MODEL, "--heal-timeout", "120"], cwd=project, capture_output=True, text=True,
                              timeout=400, env=env)
    assert "toll_frontend.parse_toll: fixed" in done.stdout, done.stdout + done.stderr
    assert f"fixed by {MODEL}" in done.stdout
    assert_one_sandbox(*spied(record))


def test_the_mcp_server_proves_a_models_candidates_in_the_fork_sandbox(project: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with OpenAIServer() as server:
        server.add(*SCRIPT)
        env, record = spy_in_children(tmp_path, server)
        command = StdioServerParameters(command=sys.executable, args=["-m", "regrow", "mcp"], cwd=project, env=env)

        async def heal() -> Any:
            async with Client(command, read_timeout_seconds=300) as client:
                return await client.call_tool("heal_function", {"target": "toll_frontend.py::parse_toll",
                                                                "tests": ["test_toll_frontend.py"], "model": MODEL,
                                                                "timeout": 120})

        reply = anyio.run(heal)
    assert not reply.is_error, reply.content
    found = reply.structured_content or json.loads(reply.content[0].text)
    assert found["status"] == "fixed" and found["fix"]["origin"] == MODEL, found
    assert_one_sandbox(*spied(record))

"""``regrow mcp`` as coding agents run it: the MCP SDK's own client spawns the command as a subprocess
and talks to it over stdio, in a copy of a fixture project with one bug (``tests/projects/agent_shop``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

PROJECT = Path(__file__).parents[1] / "projects" / "agent_shop"
TARGET = "shop/stock.py::restock"
TESTS = ["tests/test_stock.py"]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    return root


def server(root: Path, *args: str) -> StdioServerParameters:
    """``regrow mcp`` as a registration would start it: the console script, in the project folder."""
    script = Path(sys.executable).parent / "regrow"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "regrow"]
    # The SDK passes the server only a few variables by default: PYTHONPATH too, so that it runs this checkout.
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else None
    return StdioServerParameters(command=command[0], args=[*command[1:], "mcp", *args], cwd=root, env=env)


def session(root: Path, body: Callable[[Client], Awaitable[Any]], *args: str) -> Any:
    async def main() -> Any:
        async with Client(server(root, *args), read_timeout_seconds=240) as client:
            return await body(client)

    return anyio.run(main)


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def test_lists_the_four_tools_with_their_parameters(shop):
    tools = session(shop, lambda client: client.list_tools())
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"heal_function", "run_checks", "explain_failure", "history"}
    heal = by_name["heal_function"].input_schema
    assert set(heal["required"]) == {"target", "tests"}
    assert {"model", "apply", "force", "max_candidates"} <= set(heal["properties"])
    assert heal["properties"]["force"]["default"] is False
    assert "ctx" not in heal["properties"]
    assert "verdict" in (by_name["heal_function"].description or "")


def test_run_checks_and_explain_failure_point_at_the_bug(shop):
    async def body(client: Client) -> tuple[Any, Any]:
        checks = await client.call_tool("run_checks", {"target": TARGET, "tests": TESTS})
        explained = await client.call_tool("explain_failure", {"target": TARGET, "tests": TESTS, "top": 3})
        return payload(checks), payload(explained)

    checks, explained = session(shop, body)
    outcome = {test["nodeid"].split("::")[-1]: (test["passed"], test["calls_target"]) for test in checks["tests"]}
    assert checks["status"] == "failed"
    assert outcome == {"test_restock_known_item": (False, True), "test_restock_new_item": (False, True),
                       "test_restock_nothing": (True, True), "test_negative_amount_is_refused": (True, True),
                       "test_in_stock": (True, False)}
    assert explained["status"] == "explained"
    lines = explained["lines"]
    assert len(lines) == 3 and lines == sorted(lines, key=lambda line: -line["score"])
    assert {"line": 9, "text": "total = current - amount", "score": lines[0]["score"]} in lines
    assert "if amount < 0:" not in [line["text"] for line in lines]  # passing tests run it too: less suspicious
    assert explained["failing_tests"] == ["tests/test_stock.py::test_restock_known_item",
                                          "tests/test_stock.py::test_restock_new_item"]


def test_heal_reports_progress_returns_verdicts_and_diff_and_applies_then_history(shop):
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def body(client: Client) -> tuple[Any, Any, Any, Any]:
        before = await client.call_tool("history", {})
        healed = await client.call_tool("heal_function", {"target": TARGET, "tests": TESTS, "apply": True},
                                        progress_callback=on_progress)
        after = await client.call_tool("history", {"target": TARGET})
        checks = await client.call_tool("run_checks", {"target": TARGET, "tests": TESTS})
        return payload(before), payload(healed), payload(after), payload(checks)

    before, healed, after, checks = session(shop, body)
    assert before["sessions"] == []
    assert healed["status"] == "fixed" and healed["applied"] is True
    assert "-    total = current - amount\n+    total = current + amount\n" in healed["diff"]
    assert healed["verdicts"][-1]["ok"] is True
    assert any(not verdict["ok"] and verdict["reason"] for verdict in healed["verdicts"])
    assert healed["verdict_count"] >= len(healed["verdicts"]) > 1
    assert "total = current + amount" in (shop / "shop" / "stock.py").read_text()
    backup = Path(healed["log"].split("(backup: ", 1)[1].split(")", 1)[0])
    assert backup.read_text() == (PROJECT / "shop" / "stock.py").read_text()
    # Progress came while it ran, one notification per verdict reported, ending with the passing one.
    assert len(progress) >= 2 and progress[-1][2] is not None and "PASS" in progress[-1][2]
    assert all(total == 2000 for _, total, _ in progress)
    # The next call runs in a fresh worker: it imports the file as written, and every test passes.
    assert checks["status"] == "passed"
    assert after["count"] == 1 and after["sessions"][0]["ok"] == 1 and after["target"] == "restock"
    assert "current + amount" in after["sessions"][0]["fix"]


def test_a_bad_target_is_a_tool_error_and_the_server_keeps_serving(shop):
    async def body(client: Client) -> tuple[Any, Any]:
        bad = await client.call_tool("heal_function", {"target": "shop/nope.py::f", "tests": TESTS})
        good = await client.call_tool("run_checks", {"target": TARGET, "tests": TESTS})
        return bad, good

    bad, good = session(shop, body)
    assert bad.is_error and "no such file: shop/nope.py" in bad.content[0].text
    assert payload(good)["status"] == "failed"


def test_store_option_and_a_heal_without_apply_leaves_the_file(shop, tmp_path):
    ledger = tmp_path / "elsewhere" / "ledger.sqlite"

    async def body(client: Client) -> tuple[Any, Any]:
        healed = await client.call_tool("heal_function", {"target": TARGET, "tests": TESTS, "max_candidates": 500})
        return payload(healed), payload(await client.call_tool("history", {"target": "restock"}))

    healed, after = session(shop, body, "--store", str(ledger))
    assert healed["status"] == "fixed" and healed["applied"] is False and healed["fix"]["origin"] == "engine"
    assert (shop / "shop" / "stock.py").read_text() == (PROJECT / "shop" / "stock.py").read_text()
    assert ledger.is_file() and after["count"] == 1
    # history counts what was judged, the engine's own screening included, as the heal's verdict_count does
    assert after["sessions"][0]["candidates"] == healed["verdict_count"] > 1
    assert not (shop / ".regrow").exists()


def test_the_core_never_imports_the_agent_sdks_and_says_which_extra_is_missing(tmp_path):
    probe = ("import sys, regrow, regrow._cli._main, regrow._cli._agent\n"
             "print(sorted(m for m in ('mcp', 'langchain_core', 'claude_agent_sdk', 'anyio') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    without = ("import sys; sys.modules['mcp'] = None\nfrom regrow._cli._main import main\n"
               "raise SystemExit(main(['mcp']))")
    done = subprocess.run([sys.executable, "-c", without], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert "regrow mcp needs the mcp extra: pip install 'regrow[mcp]'" in done.stderr


def test_a_heal_takes_its_budget_from_the_configuration_unless_the_call_gives_one(shop):
    # Before, the tool's own defaults (2000 candidates, 300 s) were always passed: REGROW_* never reached it.
    params = server(shop)
    params.env = {**(params.env or {}), "REGROW_MAX_CANDIDATES": "3", "REGROW_TIMEOUT": "45"}
    totals: list[float | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        totals.append(total)

    async def body(client: Client) -> tuple[Any, Any]:
        configured = await client.call_tool("heal_function", {"target": TARGET, "tests": TESTS},
                                            progress_callback=on_progress)
        given = await client.call_tool("heal_function", {"target": TARGET, "tests": TESTS, "max_candidates": 500,
                                                         "timeout": 120})
        return payload(configured), payload(given)

    async def main() -> tuple[Any, Any]:
        async with Client(params, read_timeout_seconds=240) as client:
            return await body(client)

    configured, given = anyio.run(main)
    assert configured["budget"] == {"max_candidates": 3, "timeout": 45.0}, configured
    assert totals and all(total == 3 for total in totals)
    assert given["budget"] == {"max_candidates": 500, "timeout": 120.0}, given
    assert given["status"] == "fixed"


def error_of(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)


def test_bad_input_is_a_tool_error_with_the_reason_the_command_gives(shop):
    # Before: a bad model was "the worker ended (status 1) without a result; see the log", and a budget
    # that allows no search was accepted.
    calls = [{"model": "nope:x"}, {"model": "gpt-5"}, {"max_candidates": 0}, {"max_candidates": -5},
             {"timeout": 0}, {"timeout": -1}]

    async def body(client: Client) -> list[str]:
        return [error_of(await client.call_tool("heal_function", {"target": TARGET, "tests": TESTS, **call}))
                for call in calls]

    errors = session(shop, body)
    assert "unknown provider 'nope'" in errors[0]
    assert "'gpt-5' must be 'provider:model', e.g. 'openai:gpt-5'" in errors[1]
    assert [error.split(": ", 1)[1] for error in errors[2:]] == [  # after the SDK's "Error executing tool ..."
        "heal_function: max_candidates: a whole number of at least 1, not '0'",
        "heal_function: max_candidates: a whole number of at least 1, not '-5'",
        "heal_function: timeout: a number of seconds above 0, not '0'",
        "heal_function: timeout: a number of seconds above 0, not '-1'"]
    assert (shop / "shop" / "stock.py").read_text() == (PROJECT / "shop" / "stock.py").read_text()


def test_a_root_that_is_not_a_folder_is_refused_at_start_and_a_worker_that_cannot_start_says_why(shop, tmp_path):
    params = server(shop, "--root", str(tmp_path / "nowhere"))
    done = subprocess.run([params.command, *params.args], cwd=shop, env={**os.environ, **(params.env or {})},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"regrow: error: the project folder '{tmp_path / 'nowhere'}' does not exist or is not a folder"]

    async def body(client: Client) -> str:
        shutil.rmtree(shop)  # gone after the server started: its calls say so (before: a bare "Error executing tool")
        return error_of(await client.call_tool("run_checks", {"target": TARGET, "tests": TESTS}))

    assert "run_checks: its worker could not start in" in session(shop, body)


def test_targets_and_tests_outside_the_root_are_refused(shop, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(shop / "shop", outside)
    before = (outside / "stock.py").read_text()

    async def body(client: Client) -> list[str]:
        calls = [("heal_function", {"target": "../outside/stock.py::restock", "tests": TESTS, "apply": True}),
                 ("heal_function", {"target": f"{outside / 'stock.py'}::restock", "tests": TESTS, "apply": True}),
                 ("run_checks", {"target": TARGET, "tests": [str(tmp_path / "elsewhere" / "test_x.py")]}),
                 ("explain_failure", {"target": "json::dumps", "tests": TESTS})]
        return [error_of(await client.call_tool(name, arguments)) for name, arguments in calls]

    errors = session(shop, body, "--root", str(shop))
    assert all("is outside the project folder" in error for error in errors), errors
    assert f"heal_function: '../outside/stock.py::restock' is outside the project folder {shop} (" in errors[0]
    assert "json" in errors[3] and "__init__.py" in errors[3]  # a module found elsewhere on the path
    assert (outside / "stock.py").read_text() == before  # before: healed and written there


def test_apply_refused_over_uncommitted_changes_says_why_and_force_writes(shop):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=shop, check=True,
                       capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    stock = shop / "shop" / "stock.py"
    stock.write_text(stock.read_text() + "# a local edit\n")

    async def body(client: Client) -> tuple[Any, Any]:
        arguments = {"target": TARGET, "tests": TESTS, "apply": True}
        refused = await client.call_tool("heal_function", arguments)
        assert "total = current - amount" in stock.read_text()  # not written
        forced = await client.call_tool("heal_function", {**arguments, "force": True})
        return payload(refused), payload(forced)

    refused, forced = session(shop, body)
    # Before: status "not fixed", reason "", and a log saying "fixed, but not kept (see above)" with nothing above.
    assert refused["status"] == "not kept" and refused["applied"] is False and refused["exit_status"] == 3
    assert "has uncommitted changes" in refused["reason"] and "(force=true writes it anyway)" in refused["reason"]
    assert "+    total = current + amount" in refused["diff"]
    log = refused["log"]
    assert "regrow: the fix was not kept: " in log and "has uncommitted changes" in log
    assert log.index("has uncommitted changes") < log.index("fixed, but not kept (see above)")
    assert forced["status"] == "fixed" and forced["applied"] is True
    assert "total = current + amount" in stock.read_text() and "# a local edit" in stock.read_text()


def test_a_worker_that_fails_unexpectedly_still_answers_with_the_reason(shop):
    # Before: it died with a traceback on stderr, and the tool said only "the worker ended (status 1)".
    request = {"op": "run_checks", "target": TARGET, "tests": TESTS, "unexpected": 1}
    done = subprocess.run([sys.executable, "-m", "regrow._cli._agent"], cwd=shop, input=json.dumps(request),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])["result"]
    assert result["status"] == "error" and result["exit_status"] == 70
    assert result["error"].startswith("TypeError: ") and "unexpected" in result["error"]

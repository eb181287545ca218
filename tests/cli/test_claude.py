"""``regrow.claude``: Claude Agent SDK tools made with the SDK's own ``@tool``, tested by calling the tool
handlers and the in-process SDK MCP server object directly (through the mcp SDK's in-process client).

The SDK's ``query()`` drives the Claude Code CLI, which talks to Anthropic's API: it needs the
network and an account, which the tests do not have, so no test runs it (none fakes it either).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from agent_examples import load
from claude_agent_sdk import ClaudeAgentOptions, SdkMcpTool, create_sdk_mcp_server
from mcp import Client

import regrow
from regrow.claude import healed, healing_tool, regrow_server, regrow_tools

PROJECT = Path(__file__).parents[1] / "projects" / "agent_shop"


def test_the_example_tool_heals_its_handler():
    example = load("claude_tool")
    tool = example.word_lengths
    assert isinstance(tool, SdkMcpTool)
    assert tool.name == "word_lengths" and tool.description == "The length of each word of a text"
    reply = anyio.run(tool.handler, {"text": "hello big world"})
    assert reply == {"content": [{"type": "text", "text": "5,3,5"}]}
    result = regrow.state(tool.handler).last_result
    assert result is not None and result.ok and "range(len(words))" in result.fix.source  # type: ignore[union-attr]


def test_the_example_tool_through_the_in_process_server_object():
    example = load("claude_tool")
    config = create_sdk_mcp_server("text", tools=[example.word_lengths])

    async def main() -> Any:
        async with Client(config["instance"]) as client:
            listed = await client.list_tools()
            return listed, await client.call_tool("word_lengths", {"text": "a bb ccc dddd"})

    listed, called = anyio.run(main)
    assert [tool.name for tool in listed.tools] == ["word_lengths"]
    assert not called.is_error and called.content[0].text == "1,2,3,4"


def test_the_example_options_hold_both_servers():
    options = load("claude_tool").options(str(PROJECT))
    assert isinstance(options, ClaudeAgentOptions)
    assert set(options.mcp_servers) == {"regrow", "text"}  # type: ignore[arg-type]
    assert "mcp__regrow__heal_function" in options.allowed_tools


async def check_total(fn: Any) -> None:
    reply = await fn({"prices": [1.5, 2.5]})
    assert reply["content"][0]["text"] == "4.0"


@healing_tool("total", "The total of some prices", {"prices": list}, tests=[check_total], sandbox="inprocess")
async def total(args: dict[str, Any]) -> dict[str, Any]:
    prices = args["prices"]
    return {"content": [{"type": "text", "text": str(sum(prices[i] for i in range(len(prices) + 1)))}]}


@healed()
async def lookup(args: dict[str, Any]) -> dict[str, Any]:
    table = {"tea": 3}
    if args["item"] not in table:
        raise KeyError(f"unknown item {args['item']!r}")  # deliberate: no fix may weaken it
    return {"content": [{"type": "text", "text": str(table[args["item"]])}]}


def test_an_error_left_after_healing_is_an_error_result_the_model_reads():
    reply = anyio.run(lookup, {"item": "jam"})
    assert reply["is_error"] is True
    text = reply["content"][0]["text"]
    assert text.startswith("KeyError: \"unknown item 'jam'\"") and "raised deliberately" in text
    assert anyio.run(lookup, {"item": "tea"}) == {"content": [{"type": "text", "text": "3"}]}


def test_healing_tool_heals_and_healed_refuses_a_sync_handler():
    assert anyio.run(total.handler, {"prices": [2.0, 3.0]})["content"][0]["text"] == "5.0"
    with pytest.raises(regrow.RegrowError, match="async def"):
        healed()(lambda args: args)  # type: ignore[arg-type,return-value]


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    return dict(json.loads(result.content[0].text))


def test_regrow_tools_heal_a_project_through_the_in_process_server(tmp_path):
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    assert [tool.name for tool in regrow_tools(root)] == ["heal_function", "run_checks", "explain_failure",
                                                          "history"]
    config = regrow_server(root)
    target, tests = "shop/stock.py::restock", ["tests/test_stock.py"]

    async def main() -> Any:
        async with Client(config["instance"]) as client:
            explained = await client.call_tool("explain_failure", {"target": target, "tests": tests})
            healed_ = await client.call_tool("heal_function", {"target": target, "tests": tests, "apply": True})
            checks = await client.call_tool("run_checks", {"target": target, "tests": tests})
            past = await client.call_tool("history", {"target": "restock"})
            bad = await client.call_tool("run_checks", {"target": "shop/nope.py::f", "tests": tests})
            missing = await client.call_tool("heal_function", {"target": target})
            return payload(explained), payload(healed_), payload(checks), payload(past), bad, missing

    explained, healed_, checks, past, bad, missing = anyio.run(main)
    assert {"line": 9, "text": "total = current - amount", "score": explained["lines"][0]["score"]} in explained[
        "lines"]
    assert healed_["status"] == "fixed" and "+    total = current + amount" in healed_["diff"]
    assert "current + amount" in (root / "shop" / "stock.py").read_text()
    assert checks["status"] == "passed"
    assert past["count"] == 1 and past["sessions"][0]["ok"] == 1
    assert bad.is_error and "no such file: shop/nope.py" in bad.content[0].text
    assert missing.is_error and "tests" in missing.content[0].text  # the SDK's own input validation


def test_regrow_tools_refuse_a_missing_root_bad_budgets_and_targets_outside_it(tmp_path):
    with pytest.raises(regrow.RegrowError, match="does not exist or is not a folder"):
        regrow_tools(tmp_path / "nowhere")
    root = tmp_path / "shop"
    shutil.copytree(PROJECT, root)
    assert "force" in regrow_tools(root)[0].input_schema["properties"]  # type: ignore[index]
    config = regrow_server(root)
    tests = ["tests/test_stock.py"]

    async def main() -> Any:
        async with Client(config["instance"]) as client:
            zero = await client.call_tool("heal_function", {"target": "shop/stock.py::restock", "tests": tests,
                                                            "max_candidates": 0})
            outside = await client.call_tool("run_checks", {"target": "../elsewhere.py::f", "tests": tests})
            return zero, outside

    zero, outside = anyio.run(main)
    assert zero.is_error and "max_candidates: a whole number of at least 1, not '0'" in zero.content[0].text
    assert outside.is_error and "'../elsewhere.py::f' is outside the project folder" in outside.content[0].text

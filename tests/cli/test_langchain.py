"""``regrow.langchain.healing_tool``: langchain-core's ``@tool`` over ``@regrow.heal``, with the real
langchain-core tool objects (invoke, ainvoke, tool calls) and the example file ``examples/langchain_tool.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_examples import EXAMPLES, load
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException

import regrow
from regrow.langchain import healing_tool


def test_the_example_tool_keeps_name_description_and_schema_and_heals_itself():
    example = load("langchain_tool")
    tool = example.initials
    assert isinstance(tool, BaseTool)
    assert tool.name == "initials"
    assert tool.description == "The initials of a full name: 'Ada Lovelace' -> 'A.L.'."
    assert tool.args == {"name": {"title": "Name", "type": "string"}}
    before = (EXAMPLES / "langchain_tool.py").read_text()
    assert tool.invoke({"name": "Alan Mathison Turing"}) == "A.M.T."
    result = regrow.state(tool.func).last_result
    assert result is not None and result.ok and result.fix is not None and result.fix.origin == "engine"
    assert "range(len(parts))" in result.fix.source
    assert tool.invoke({"name": "Ada Lovelace"}) == "A.L."  # the fix stays installed
    assert (EXAMPLES / "langchain_tool.py").read_text() == before  # nothing written back


def test_an_error_left_after_healing_is_the_tool_output_not_a_crash():
    example = load("langchain_tool")
    tool = example.weather
    assert tool.name == "forecast" and tool.description == "Tomorrow's weather for a city."
    assert tool.invoke({"city": "Oslo"}) == "rain, 9 °C"
    output = tool.invoke({"city": "Atlantis"})
    assert output.startswith("LookupError: no forecast for 'Atlantis'")
    assert "regrow: could not repair weather" in output and "raised deliberately" in output  # what regrow tried
    # As a tool call from a model: a ToolMessage with status "error", the agent goes on.
    message = tool.invoke({"name": "forecast", "args": {"city": "Atlantis"}, "id": "call-1", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and message.status == "error" and message.tool_call_id == "call-1"
    assert "no forecast for 'Atlantis'" in str(message.content)


def check_slug(fn):
    assert asyncio.run(fn(title="Hello Big World")) == "hello-big-world"


@healing_tool(tests=[check_slug], sandbox="inprocess")
async def slug(title: str) -> str:
    """A URL slug of a title."""
    words = title.lower().split()
    return "-".join(words[i] for i in range(len(words) + 1))


@healing_tool
def strict(value: int) -> int:
    """Refuses negative values with the framework's own error."""
    if value < 0:
        raise ToolException("negative values are not allowed")
    return value


def test_async_tools_heal_through_ainvoke():
    assert asyncio.run(slug.ainvoke({"title": "Regrow Heals Tools"})) == "regrow-heals-tools"
    assert regrow.state(slug.coroutine).last_result.ok  # type: ignore[arg-type,union-attr]


def test_a_tool_exception_of_the_function_itself_passes_through_as_output():
    assert strict.name == "strict" and strict.invoke({"value": 3}) == 3
    assert strict.invoke({"value": -1}) == "negative values are not allowed"


def test_heal_options_are_checked_at_decoration():
    with pytest.raises(ValueError, match="on_failure"):
        healing_tool(on_failure="explode")(strict.func)  # type: ignore[arg-type]


def test_the_example_runs_as_a_script():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(EXAMPLES / "langchain_tool.py")], capture_output=True, text=True,
                          timeout=120, cwd=Path(EXAMPLES))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "A.L." and lines[1].startswith("LookupError: no forecast for 'Atlantis'")

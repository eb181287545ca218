"""Claude Agent SDK tools with regrow (pip install 'regrow[claude]').

``healing_tool`` is the SDK's own ``@tool`` over ``@regrow.heal``: a failing handler is repaired
(proven by ``tests=``) and run again; an error that remains is the SDK's error result
(``is_error``), which Claude reads. ``regrow_server`` gives Claude regrow's own tools (heal a
function against its tests, run the tests, localize a failure, the ledger) as an in-process server.
"""

from __future__ import annotations

from regrow.claude import healing_tool, regrow_server


async def check_lengths(fn):
    reply = await fn({"text": "a bb ccc"})
    assert reply["content"][0]["text"] == "1,2,3"


@healing_tool("word_lengths", "The length of each word of a text", {"text": str}, tests=[check_lengths])
async def word_lengths(args):
    words = args["text"].split()
    lengths = [len(words[i]) for i in range(len(words) + 1)]  # the bug: one index too many
    return {"content": [{"type": "text", "text": ",".join(map(str, lengths))}]}


def options(project="."):
    """What ``claude_agent_sdk.query(prompt=..., options=options())`` runs with: regrow's tools and ours.

    ``query()`` drives the Claude Code CLI, which talks to Anthropic's API: it needs the network and
    an account, so the tests of this example call the tools and the server object directly instead.
    """
    from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server

    return ClaudeAgentOptions(
        mcp_servers={"regrow": regrow_server(project),
                     "text": create_sdk_mcp_server("text", tools=[word_lengths])},
        allowed_tools=["mcp__regrow__heal_function", "mcp__regrow__explain_failure", "mcp__regrow__run_checks",
                       "mcp__regrow__history", "mcp__text__word_lengths"],
    )

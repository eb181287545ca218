"""Claude Agent SDK tools (the ``regrow[claude]`` extra, ``claude-agent-sdk``).

- :func:`regrow_tools` / :func:`regrow_server`: regrow's own tools — ``heal_function``,
  ``run_checks``, ``explain_failure``, ``history`` — made with the SDK's ``@tool`` decorator, and the
  in-process SDK MCP server holding them, for ``ClaudeAgentOptions(mcp_servers={"regrow": ...})``.
  Each call runs in a fresh interpreter in the project folder, as with ``regrow mcp``.
- :func:`healed`: stacks :func:`regrow.heal` under an SDK tool function, so ``@tool(...)`` over
  ``@healed(...)`` over ``async def handler(args)`` heals the handler when it fails; an error that
  remains after healing becomes the SDK's error result (``is_error``) with the reason, which the
  model reads, not an exception. :func:`healing_tool` is both decorators in one.

Importing this module imports the SDK; ``import regrow`` alone never does. See docs/agents.md.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server, tool

from ._cli._agent import DEFAULT_STORE, heal_limit, project_folder
from ._cli._agent import history as read_history
from ._cli._agent_process import OperationError, run_operation
from ._errors import RegrowError
from ._heal._decorator import heal
from ._heal._ledger import ledger_of
from ._version import __version__

__all__ = ["healed", "healing_tool", "regrow_server", "regrow_tools"]

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_LIMIT = 300.0  # seconds for a run of the checks or a localization; a heal has its own timeout + 60


def healed(**heal_options: Any) -> Callable[[Handler], Handler]:
    """A decorator for an SDK tool handler (``async def handler(args) -> dict``), to stand under ``@tool``:
    :func:`regrow.heal` with ``heal_options``, and an error that remains after healing returned as
    ``{"content": [...], "is_error": True}`` with the error and what regrow tried."""

    def decorate(handler: Handler) -> Handler:
        if not inspect.iscoroutinefunction(handler):
            raise RegrowError(f"{handler.__qualname__} must be an async def handler(args), as the SDK's @tool takes")
        repaired = heal(**heal_options)(handler)

        @functools.wraps(repaired)
        async def call(args: dict[str, Any]) -> dict[str, Any]:
            try:
                return dict(await repaired(args))
            except Exception as exc:
                ledger = ledger_of(exc)
                return _text(f"{type(exc).__name__}: {exc}" + (f"\n{ledger}" if ledger else ""), error=True)

        return call

    return decorate


def healing_tool(name: str, description: str, input_schema: type | dict[str, Any],
                 **heal_options: Any) -> Callable[[Handler], SdkMcpTool[Any]]:
    """``@tool(name, description, input_schema)`` over ``@healed(**heal_options)``, in one decorator."""

    def decorate(handler: Handler) -> SdkMcpTool[Any]:
        return tool(name, description, input_schema)(healed(**heal_options)(handler))

    return decorate


def regrow_tools(root: str | Path = ".", store: str | Path | None = None) -> list[SdkMcpTool[Any]]:
    """regrow's four tools as SDK tools, working in the project folder ``root`` (the ledger in ``store``,
    ``root/.regrow/ledger.sqlite`` by default). Their results are JSON text; a failure is ``is_error``.
    A ``root`` that is not a folder is a :class:`~regrow.RegrowError` here."""
    folder = project_folder(root)
    ledger = Path(store) if store is not None else folder / DEFAULT_STORE

    async def run(request: dict[str, Any], limit: float) -> dict[str, Any]:
        try:
            return _text(json.dumps(await run_operation(request, root=folder, limit=limit), default=str))
        except OperationError as exc:
            return _text(str(exc), error=True)

    @tool("heal_function", "Repair a Python function (path.py::qualname) until its pytest tests pass: every "
          "verdict, the fix and its diff; apply=true writes the fix into the file (with a backup; force=true "
          "also over uncommitted changes).",
          {"type": "object", "required": ["target", "tests"], "properties": {
              "target": {"type": "string"}, "tests": {"type": "array", "items": {"type": "string"}},
              "model": {"type": "string"}, "apply": {"type": "boolean"}, "force": {"type": "boolean"},
              "max_candidates": {"type": "integer"}, "timeout": {"type": "number"}}})
    async def heal_function(args: dict[str, Any]) -> dict[str, Any]:
        # A budget not given is the configuration's ([tool.regrow], REGROW_*), as the worker reads it in root.
        timeout = None if args.get("timeout") is None else float(args["timeout"])
        most = None if args.get("max_candidates") is None else int(args["max_candidates"])
        return await run({"op": "heal_function", "target": args["target"], "tests": args["tests"],
                          "model": args.get("model"), "apply": bool(args.get("apply", False)),
                          "force": bool(args.get("force", False)), "max_candidates": most, "timeout": timeout,
                          "store": str(ledger)},
                         heal_limit(folder, timeout))

    checks_schema = {"type": "object", "required": ["target", "tests"], "properties": {
        "target": {"type": "string"}, "tests": {"type": "array", "items": {"type": "string"}}}}

    @tool("run_checks", "Run pytest tests once on a function as it is: each test's outcome, and whether it "
          "calls the function.", checks_schema)
    async def run_checks(args: dict[str, Any]) -> dict[str, Any]:
        return await run({"op": "run_checks", "target": args["target"], "tests": args["tests"]}, _LIMIT)

    @tool("explain_failure", "The most suspicious lines of a failing function with their scores (coverage of "
          "failing vs passing tests), the failing tests and the failure.", checks_schema)
    async def explain_failure(args: dict[str, Any]) -> dict[str, Any]:
        return await run({"op": "explain_failure", "target": args["target"], "tests": args["tests"]}, _LIMIT)

    @tool("history", "Earlier repair sessions from regrow's ledger, newest first (optionally of one target).",
          {"type": "object", "properties": {"target": {"type": "string"}, "limit": {"type": "integer"}}})
    async def history(args: dict[str, Any]) -> dict[str, Any]:
        found = read_history(ledger, args.get("target"), int(args.get("limit", 20)))
        return _text(json.dumps(found, default=str))

    return [heal_function, run_checks, explain_failure, history]


def regrow_server(root: str | Path = ".", store: str | Path | None = None) -> McpSdkServerConfig:
    """The in-process SDK MCP server with :func:`regrow_tools`, for ``ClaudeAgentOptions.mcp_servers``."""
    return create_sdk_mcp_server("regrow", __version__, regrow_tools(root, store))


def _text(text: str, error: bool = False) -> dict[str, Any]:
    reply: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if error:
        reply["is_error"] = True
    return reply

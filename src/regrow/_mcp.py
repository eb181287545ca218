"""``regrow mcp``: regrow's tools for coding agents, as a Model Context Protocol server over stdio.

Built on the official ``mcp`` SDK, v2 (the ``regrow[mcp]`` extra); only this module imports it. The
tools are the operations of :mod:`regrow._agent`. Healing, checking and explaining import the
project's code and run its tests, so each call runs in a fresh ``python -m regrow._agent`` in the
project folder: the server keeps no module of the project loaded, a fix written back is what the
next call imports, and a test that hangs or kills its interpreter ends that call, not the server.
A heal reports each verdict as a progress notification while it runs. See docs/agents.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from . import __version__
from ._agent import DEFAULT_STORE
from ._agent import history as read_history

_INSTRUCTIONS = """\
regrow repairs a failing Python function and proves the fix against its pytest tests.
Targets are `path/to/module.py::function` (or `::Class.method`), relative to the project folder;
tests are pytest node ids or test files. explain_failure says where to look; run_checks runs the
tests as they are; heal_function searches for a fix and returns every verdict and the diff
(apply=true writes the fix into the file, with a backup); history lists earlier repairs."""
_GRACE = 60.0  # seconds past a heal's own budget before its worker is killed


def build_server(root: str | Path = ".", store: str | Path | None = None,
                 python: str = sys.executable) -> MCPServer:
    """The server, its tools working in ``root`` with the ledger in ``store`` (``root/.regrow/ledger.sqlite``)."""
    root = Path(root).resolve()
    ledger = Path(store) if store is not None else root / DEFAULT_STORE
    server: MCPServer = MCPServer("regrow", version=__version__, instructions=_INSTRUCTIONS)
    worker = _Worker(root, python)

    @server.tool()
    async def heal_function(target: str, tests: list[str], ctx: Context, model: str | None = None,
                            apply: bool = False, max_candidates: int = 2000, timeout: float = 300.0) -> dict[str, Any]:
        """Repair `target` until `tests` pass: every verdict (candidate, check, reason), the fix and its diff.

        The built-in search engine goes first; `model` (e.g. "openai:gpt-5", its key in the server's
        environment) is asked only for what the engine cannot fix. `apply` writes the fix into the file
        (a backup is kept). Each verdict is sent as a progress notification while the heal runs.
        """
        return await worker.run(ctx, {"op": "heal_function", "target": target, "tests": tests, "model": model,
                                      "apply": apply, "max_candidates": max_candidates, "timeout": timeout,
                                      "store": str(ledger)}, timeout + _GRACE)

    @server.tool()
    async def run_checks(target: str, tests: list[str], ctx: Context) -> dict[str, Any]:
        """Run `tests` once on `target` as it is: each test's outcome and whether it calls the target."""
        return await worker.run(ctx, {"op": "run_checks", "target": target, "tests": tests}, 300.0)

    @server.tool()
    async def explain_failure(target: str, tests: list[str], ctx: Context, top: int = 5) -> dict[str, Any]:
        """Where `target` most likely goes wrong: its `top` most suspicious lines with their scores
        (coverage of failing vs passing tests, Ochiai), the failing tests and the failure."""
        return await worker.run(ctx, {"op": "explain_failure", "target": target, "tests": tests, "top": top}, 300.0)

    @server.tool()
    def history(target: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Earlier repair sessions from the ledger, newest first: all, or those of `target`
        (`path.py::qualname` or a qualname). Each has its outcome, reason, candidate count and fix."""
        return read_history(ledger, target, limit)

    return server


class _Worker:
    """Runs one operation in a fresh interpreter in the project folder, forwarding its progress."""

    def __init__(self, root: Path, python: str) -> None:
        self.root, self.python = root, python

    async def run(self, ctx: Context, request: dict[str, Any], limit: float) -> dict[str, Any]:
        result: dict[str, Any] | None = None
        process = await anyio.open_process([self.python, "-m", "regrow._agent"], cwd=self.root,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)
        async with process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send(json.dumps(request).encode())
            await process.stdin.aclose()
            with anyio.move_on_after(limit) as scope:
                async for line in _lines(process.stdout):
                    message = json.loads(line)
                    if message.get("type") == "progress":
                        await ctx.report_progress(message["progress"], message["total"], message["message"])
                    elif message.get("type") == "result":
                        result = message["result"]
            if scope.cancelled_caught:
                process.kill()
                raise ToolError(f"{request['op']} did not finish within {limit:g}s; its worker was stopped")
            code = await process.wait()
        if result is None:
            raise ToolError(f"{request['op']}: the worker ended (status {code}) without a result; see the server log")
        if result.get("status") == "error":
            raise ToolError(f"{request['op']}: {result.get('error', 'failed')}")
        return result


async def _lines(stream: Any) -> Any:
    """The newline-ended lines of a byte stream, decoded."""
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            if line.strip():
                yield line.decode("utf-8")
    if buffer.strip():
        yield buffer.decode("utf-8")


def serve(root: str | Path = ".", store: str | Path | None = None) -> None:
    """Serve the tools over stdio until the client closes the connection."""
    build_server(root, store).run("stdio")

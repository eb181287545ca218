"""``regrow mcp``: regrow's tools for coding agents, as a Model Context Protocol server over stdio.

Built on the official ``mcp`` SDK, v2 (the ``regrow[mcp]`` extra); only this module imports it. The
tools are the operations of :mod:`regrow._cli._agent`; healing, checking and explaining run each call in
a fresh interpreter in the project folder (:mod:`regrow._cli._agent_process`). A heal reports each
verdict as a progress notification while it runs. See docs/agents.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .._version import __version__
from ._agent import DEFAULT_STORE, heal_limit, project_folder
from ._agent import history as read_history
from ._agent_process import OperationError, run_operation

INSTRUCTIONS = """\
regrow repairs a failing Python function and proves the fix against its pytest tests.
Targets are `path/to/module.py::function` (or `::Class.method`), relative to the project folder;
tests are pytest node ids or test files. explain_failure says where to look; run_checks runs the
tests as they are; heal_function searches for a fix and returns every verdict and the diff
(apply=true writes the fix into the file, with a backup; force=true also over uncommitted changes);
history lists earlier repairs. Targets and tests outside the project folder are refused."""
LIMIT = 300.0  # seconds for a run of the checks or a localization


def build_server(root: str | Path = ".", store: str | Path | None = None,
                 python: str = sys.executable) -> MCPServer:
    """The server, its tools working in ``root`` with the ledger in ``store`` (``root/.regrow/ledger.sqlite``);
    a ``root`` that is not a folder is a :class:`~regrow.RegrowError` here, not an error in every call."""
    folder = project_folder(root)
    ledger = Path(store) if store is not None else folder / DEFAULT_STORE
    server: MCPServer = MCPServer("regrow", version=__version__, instructions=INSTRUCTIONS)

    async def run(request: dict[str, Any], limit: float, ctx: Context | None = None) -> dict[str, Any]:
        async def forward(done: float, total: float, message: str) -> None:
            if ctx is not None:
                await ctx.report_progress(done, total, message)

        try:
            return await run_operation(request, root=folder, limit=limit, python=python, on_progress=forward)
        except OperationError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    async def heal_function(target: str, tests: list[str], ctx: Context, model: str | None = None,
                            apply: bool = False, force: bool = False, max_candidates: int | None = None,
                            timeout: float | None = None) -> dict[str, Any]:
        """Repair `target` until `tests` pass: every verdict (candidate, check, reason), the fix and its diff.

        The built-in search engine goes first; `model` (e.g. "openai:gpt-5", its key in the server's
        environment) is asked only for what the engine cannot fix. `apply` writes the fix into the file
        (a backup is kept); a file with uncommitted git changes is refused (status "not kept", the
        reason given) unless `force`. Each verdict is sent as a progress notification while the heal runs.
        `max_candidates` and `timeout` (seconds) default to the project's configuration
        ([tool.regrow] in pyproject.toml, REGROW_* in the server's environment), else 2000 and 300.
        """
        return await run({"op": "heal_function", "target": target, "tests": tests, "model": model, "apply": apply,
                          "force": force, "max_candidates": max_candidates, "timeout": timeout,
                          "store": str(ledger)},
                         heal_limit(folder, timeout), ctx)

    @server.tool()
    async def run_checks(target: str, tests: list[str]) -> dict[str, Any]:
        """Run `tests` once on `target` as it is: each test's outcome and whether it calls the target."""
        return await run({"op": "run_checks", "target": target, "tests": tests}, LIMIT)

    @server.tool()
    async def explain_failure(target: str, tests: list[str], top: int = 5) -> dict[str, Any]:
        """Where `target` most likely goes wrong: its `top` most suspicious lines with their scores
        (coverage of failing vs passing tests, Ochiai), the failing tests and the failure."""
        return await run({"op": "explain_failure", "target": target, "tests": tests, "top": top}, LIMIT)

    @server.tool()
    def history(target: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Earlier repair sessions from the ledger, newest first: all, or those of `target`
        (`path.py::qualname` or a qualname). Each has its outcome, reason, candidate count and fix."""
        return read_history(ledger, target, limit)

    return server


def serve(root: str | Path = ".", store: str | Path | None = None) -> None:
    """Serve the tools over stdio until the client closes the connection."""
    build_server(root, store).run("stdio")

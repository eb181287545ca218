"""One agent operation in a fresh interpreter: ``python -m regrow._cli._agent`` in the project folder.

Used by the agent front-ends that run in a long-lived host (the MCP server, the Claude Agent SDK
tools): the host never imports the project, a fix written back is what the next call imports, and a
test that hangs or kills its interpreter ends that call, not the host. Imported only by those
front-ends (it needs anyio, which their SDKs bring).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from .._errors import RegrowError

OnProgress = Callable[[float, float, str], Awaitable[None]]


class OperationError(RegrowError):
    """An operation that could not run: bad input, a worker that died or ran out of time."""


async def run_operation(request: dict[str, Any], *, root: Path, limit: float, python: str = sys.executable,
                        on_progress: OnProgress | None = None) -> dict[str, Any]:
    """The result of ``request`` (``{"op": ..., arguments}``) run by a worker in ``root``, within ``limit``
    seconds; each progress line it sends goes to ``on_progress``. :class:`OperationError` when it fails."""
    result: dict[str, Any] | None = None
    try:
        process = await anyio.open_process([python, "-m", "regrow._cli._agent"], cwd=root, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=None)  # its stderr is the host's log
    except OSError as exc:  # the project folder is gone, or the interpreter
        raise OperationError(f"{request['op']}: its worker could not start in {root}: {exc}") from None
    async with process:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send(json.dumps(request).encode())
        await process.stdin.aclose()
        with anyio.move_on_after(limit) as scope:
            async for line in _lines(process.stdout):
                message = json.loads(line)
                if message.get("type") == "progress" and on_progress is not None:
                    await on_progress(message["progress"], message["total"], message["message"])
                elif message.get("type") == "result":
                    result = message["result"]
        if scope.cancelled_caught:
            process.kill()
            raise OperationError(f"{request['op']} did not finish within {limit:g}s; its worker was stopped")
        code = await process.wait()
    if result is None:
        raise OperationError(f"{request['op']}: the worker ended (status {code}) without a result; see the log")
    if result.get("status") == "error":
        raise OperationError(f"{request['op']}: {result.get('error', 'failed')}")
    return result


async def _lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
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

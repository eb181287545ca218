"""A whole repair of one small bug through a scripted model: the ``repair`` section of ``probe.py``.

A loopback HTTP server speaks the OpenAI chat-completions wire format and answers every request with
the same reply (the fixed function in a ``python`` block), counting the requests. regrow
(``proposer_for("openai:...", base_url=...)`` as its only proposer) and self-heal
(``RepairLoop(proposer=OpenAIProposer(base_url=...))``) each repair the same bug, checked by the same
test; the row is the wall time of the repair, and ``model calls`` counts what reached the server.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BUG = "def middle(values):\n    return sorted(values)[len(values) // 2 + 1]\n"
FIX = "def middle(values):\n    return sorted(values)[len(values) // 2]\n"
REPLY = f"```python\n{FIX}```\n"


def middle_test(fn: Callable[..., Any]) -> None:
    assert fn([3, 1, 2]) == 2
    assert fn([5, 4, 6, 7, 8]) == 6


def buggy_function(folder: str) -> Callable[..., Any]:
    """``middle`` with its bug, compiled from a real file (both peers read the source)."""
    path = os.path.join(folder, "buggy_middle.py")
    with open(path, "w") as handle:
        handle.write(BUG)
    namespace: dict[str, Any] = {"__name__": "buggy_middle"}
    exec(compile(BUG, path, "exec"), namespace)
    fn: Callable[..., Any] = namespace["middle"]
    return fn


class ScriptedModel:
    """``with ScriptedModel() as model:`` a server on 127.0.0.1; ``model.url``, ``model.calls``."""

    def __init__(self) -> None:
        self.calls = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.calls += 1
                body = json.dumps(
                    {
                        "id": f"scripted-{owner.calls}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": "scripted",
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _regrow(url: str, folder: str) -> bool:
    import regrow
    from regrow.llm import proposer_for

    model = proposer_for("openai:scripted", base_url=url, api_key="scripted", stream=False, evidence=False)
    result = regrow.repair(
        buggy_function(folder), ([3, 1, 2],), tests=[middle_test], install=False, proposers=[model], jobs=1
    )
    return bool(result.ok)


def _self_heal(url: str, folder: str) -> bool:
    from self_heal import RepairLoop
    from self_heal.llm import OpenAIProposer

    loop = RepairLoop(max_attempts=2, proposer=OpenAIProposer(model="scripted", base_url=url, api_key="scripted"))
    return bool(loop.run(buggy_function(folder), args=([3, 1, 2],), tests=[middle_test]).succeeded)


def repair(wanted: set[str]) -> dict[str, Any]:
    drivers = {"regrow": _regrow, "self-heal": _self_heal}
    rows: dict[str, Any] = {}
    for name, drive in drivers.items():
        if name not in wanted:
            continue
        folder = tempfile.mkdtemp(prefix="regrow-peers-repair-")
        try:
            with ScriptedModel() as model:
                started = time.perf_counter()
                fixed = drive(model.url, folder)
                seconds = time.perf_counter() - started
            if fixed:
                rows[name] = seconds
                rows[f"{name} model calls"] = float(model.calls)
            else:
                rows[name] = f"missing: {name} did not fix the bug with the scripted reply ({model.calls} calls)"
        except Exception as error:
            rows[name] = f"missing: {type(error).__name__}: {error}"[:300]
    if "healing-agent" in wanted:
        rows["healing-agent"] = (
            "missing: healing-agent 0.5.0 is not driven: its OpenAI client takes no base URL in its config "
            "(only the SDK's OPENAI_BASE_URL) and it rewrites the user's file on disk"
        )
    return {"unit": "s/repair", "baseline": "", "rows": rows}

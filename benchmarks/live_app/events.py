"""What the benchmark's servers share: whether regrow is on (``LIVE_REGROW``), its ``wait``, and the
event log the benchmark reads the repair sessions from (``LIVE_EVENTS``: a JSON line per event)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

_lock = threading.Lock()
ENABLED = os.environ.get("LIVE_REGROW") == "1"
WAIT = float(os.environ.get("LIVE_WAIT", "0.05"))


def record(event: Any) -> None:
    """An ``on_event`` handler: the event's type, target and wall-clock time, one JSON line."""
    line = json.dumps({"type": event.type, "target": event.target, "t": time.time(), "pid": os.getpid()})
    with _lock, open(os.environ["LIVE_EVENTS"], "a") as log:
        log.write(line + "\n")


def options() -> dict[str, Any]:
    """The middleware's keywords: the oracle, the latency policy and the event log."""
    from oracle import TESTS

    return {"tests": TESTS, "wait": WAIT, "on_event": record}

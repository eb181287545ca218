"""Loaded at the start of every interpreter a front-end test starts (``PYTHONPATH``), when ``REGROW_SPY``
names a file: records in it, one JSON line each, which sandbox proved each candidate and whether the
no-oracle policy ran (and with an oracle or not). It lets a test see inside the ``regrow heal`` the
pytest plugin starts, and the agent worker the MCP server starts."""

from __future__ import annotations

import json
import os
from typing import Any

_FILE = os.environ.get("REGROW_SPY")


def _note(**fields: Any) -> None:
    assert _FILE is not None
    with open(_FILE, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields) + "\n")


if _FILE:
    import regrow._heal._assembly
    import regrow._session._loop

    _prove = regrow._session._loop.prove
    _prepare = regrow._heal._assembly.admit

    def _spy_prove(target: Any, candidate: Any, checks: Any, sandbox: Any, *args: Any, **kwargs: Any) -> Any:
        _note(kind="prove", origin=candidate.origin, sandbox=type(sandbox).__name__)
        return _prove(target, candidate, checks, sandbox, *args, **kwargs)

    def _spy_prepare(*args: Any, **kwargs: Any) -> Any:
        _note(kind="policy", oracle=kwargs["oracle"])
        return _prepare(*args, **kwargs)

    regrow._session._loop.prove = _spy_prove  # type: ignore[assignment]
    regrow._heal._assembly.admit = _spy_prepare  # type: ignore[assignment]

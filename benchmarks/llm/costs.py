"""Cost per correct fix in ``make bench-llm``: the model's speed from the server's request log, and
which request each of regrow's fixes came from (locate, rewrite, choose, or the engine)."""

from __future__ import annotations

from collections import Counter
from typing import Any


def fix_source(row: dict[str, Any]) -> str:
    """Which request a regrow fix came from: ``locate``, ``choose``, ``rewrite`` (a model's function or
    edit), ``engine`` — as ``regrow bench`` says it (``via``), else from the fix's operator label (runs
    recorded before it said); ``""`` for no fix or a self-heal run."""
    if not row.get("fix") or row["system"] == "self-heal":
        return ""
    if row.get("via"):
        return str(row["via"])
    operator = str(row.get("operator") or "")
    if "locate:" in operator:
        return "locate"
    if operator.startswith("choose"):
        return "choose"
    return "rewrite" if operator.startswith("call ") else "engine"


def speed(total: Counter) -> dict[str, Any]:
    """Mean first-token latency (s) and output tokens per second after it, from totals of call_stats."""
    return {
        "first_token_seconds": round(total["first_token_ms"] / 1000 / total["timed"], 2) if total["timed"] else None,
        "tokens_per_second": round(total["generated"] / (total["generating_ms"] / 1000), 1)
        if total["generating_ms"] else None,
    }


def shown(value: Any) -> str:
    return "—" if value is None else str(value)


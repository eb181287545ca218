"""Which request a regrow call was, and what came back: the measurement the default format is chosen by.

A regrow prompt asks for the defective line (``locate``: a JSON answer the engine searches at), a pick
among fixes that disagree (``choose``), SEARCH/REPLACE blocks (``edit``), the whole function (``whole``), or the
whole function with its old body left out (``rewrite``, the compact ladder's rung; ``rewrite, step by
step`` its second instruction); ``narrow``
marks a prompt with the window around the fault. For each kind the bench counts the calls and
what their replies were: echoes, no usable function, a changed function, and the fixes (the call
that gave a run its fix). self-heal asks one way (``self-heal``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any


# How regrow's fix requests begin: the compact prompt's system text, and the full one's.
REGROW_SYSTEMS = ("You fix a bug in one Python function", "You repair one Python function")


def asked(record: dict[str, Any]) -> str:
    messages = record.get("messages") or [{}]
    system = str(messages[0].get("content", ""))
    user = str(messages[-1].get("content", "")) if len(messages) > 1 else ""
    if system.startswith("Find the defective line"):  # regrow's locate request (a JSON answer, no function)
        return "locate"
    if system.startswith("You settle an ambiguous repair"):  # regrow's choose request
        return "choose"
    if not system.startswith(REGROW_SYSTEMS):  # since 37968b2 a compact prompt may have no "## The failure"
        return "self-heal"
    kind = "rewrite" if "old body is wrong and left out" in user else "edit" if "<<<<<<< SEARCH" in system else "whole"
    if kind == "rewrite" and "step by step from its docstring" in user:
        kind = "rewrite, step by step"  # the second rewrite instruction (since 2b94a4b)
    return kind + (" narrow" if "## Focus:" in user else "")


def breakdown(calls: dict[str, list[dict[str, Any]]], rows: list[dict[str, Any]],
              outcome: Any) -> dict[str, dict[str, int]]:
    """Per kind of request: calls, echoes, no_function, changed, fixed. ``outcome(record, row)`` says
    ``"echo"``, ``"none"`` or ``"changed"`` for one request of a run."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        records = calls.get(f"{row['system']}|{row['task']}", [])
        last = None
        for record in records:
            if "error" in record or record.get("client_gone"):
                continue
            kind = asked(record)
            table[kind]["calls"] += 1
            table[kind][outcome(record, row)] += 1
            last = kind
        if row.get("fix") and last is not None:
            table[last]["fixed"] += 1
    return {kind: {k: counts[k] for k in ("calls", "echo", "none", "changed", "fixed")}
            for kind, counts in sorted(table.items())}


def markdown(table: dict[str, dict[str, int]]) -> list[str]:
    lines = ["Calls by what they asked for (regrow's edit / whole / rewrite requests; `narrow`: with the window "
             "around the fault) and what came back:", "",
             "| asked for | calls | echoes | no usable function | changed function | gave the fix |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {kind} | {c['calls']} | {c['echo']} | {c['none']} | {c['changed']} | {c['fixed']} |"
              for kind, c in table.items()]
    return [*lines, ""]

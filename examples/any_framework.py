"""The recipe for stacking ``@regrow.heal`` under any framework's decorator.

1. ``@regrow.heal`` goes directly above the ``def``, under the framework's decorator: the framework
   registers the healed function, so every call it makes goes through healing; ``heal`` keeps the
   name, docstring, signature and annotations (``functools.wraps``), which is what frameworks read
   to build a tool's schema.
2. Give an oracle (``tests=``, ``verify=`` or ``record=``): without one regrow repairs only crashes,
   only with the engine, and never weakens a deliberate ``raise``.
3. At the framework's boundary, turn the error that remains after healing into the framework's own
   error result (LangChain: ``ToolException``; the Claude Agent SDK: ``is_error``; here:
   ``{"error": ...}``). It is the user's original exception, with what regrow tried attached
   (``regrow.ledger_of(exc)``).

The "framework" below is a stand-in with the usual shape: a decorator that registers a function
under its name and schema, and a dispatcher that calls it with a dict of arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import regrow

TOOLS: dict[str, dict[str, Any]] = {}


def register(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The framework's decorator: a tool named after the function, its parameters and description."""
    TOOLS[fn.__name__] = {"call": fn, "description": inspect.getdoc(fn),
                          "parameters": list(inspect.signature(fn).parameters)}
    return fn


def dispatch(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The framework's dispatcher, with step 3: an error left after healing is a result, not a crash."""
    try:
        return {"result": TOOLS[name]["call"](**arguments)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "regrow": regrow.ledger_of(exc)}


def check_median(fn: Callable[..., Any]) -> None:
    assert fn(values=[1.0, 2.0, 3.0, 4.0]) == 2.5
    assert fn(values=[5.0, 1.0]) == 3.0
    assert fn(values=[3.0, 1.0, 2.0]) == 2.0
    # Without this one, len(ordered) // 3 passes the three above too (regrow abstains: it cannot tell)
    assert fn(values=[8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0]) == 4.5


@register
@regrow.heal(tests=[check_median])
def median(values: list[float]) -> float:
    """The median of a non-empty list of numbers."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle] + ordered[middle + 1]) / 2  # the bug: middle - 1

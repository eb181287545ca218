"""``request_healing()``: the code itself says that a result is wrong, though nothing raised.

A data contract broken, an empty result that should not be: a handled branch calls
:func:`request_healing`, which raises :class:`HealingRequested`. The decorator treats it as a
failure with that reason; if no fix is proven, the ``HealingRequested`` propagates to the caller
as any other failure does. A fix must keep every ``request_healing(...)`` call of the original:
deleting the code's own check would silence the signal, not fix what it detects.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any, NoReturn

_NAME = "request_healing"


class HealingRequested(Exception):
    """Raised by :func:`request_healing`: the calling code asks for its own repair.

    ``reason`` says what is wrong; ``details`` are values that show it (redacted like any evidence).
    """

    def __init__(self, reason: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details: dict[str, Any] = dict(details or {})


HealingRequested.__module__ = "regrow"  # shown as regrow.HealingRequested in tracebacks and evidence


def request_healing(reason: str, details: Mapping[str, Any] | None = None) -> NoReturn:
    """Ask for the calling function to be healed: raise :class:`HealingRequested` with ``reason``.

    Call it from a branch that detects a wrong result the code would otherwise return. Inside a
    function decorated with ``@regrow.heal`` it starts a repair whose replay must no longer ask;
    anywhere else it is an exception like any other.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise TypeError("request_healing() needs a reason: a non-empty string that says what is wrong")
    raise HealingRequested(reason, details)


def requests_in(source: str) -> int:
    """How many ``request_healing(...)`` calls ``source`` makes (by name, with or without ``regrow.``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 0
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            count += name == _NAME
    return count


def dropped_requests(original: str, candidate: str) -> str | None:
    """Why ``candidate`` may not stand in for ``original``: it calls ``request_healing`` fewer times."""
    before = requests_in(original)
    if not before:
        return None
    after = requests_in(candidate)
    if after >= before:
        return None
    return (f"it removes {before - after} of the {before} request_healing() calls of the original: the code's own "
            "check must stay, a fix changes what makes it ask")

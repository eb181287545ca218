"""The evidence around a failure besides its frame: the exception's attributes and chained causes,
the frames between the decorated function and the raise, the allowed environment variables.

Every value is rendered bounded (:mod:`regrow._evidence._render`) and redacted here, once, before it is kept.
"""

from __future__ import annotations

import os
import traceback
import types
from collections.abc import Mapping, Sequence
from typing import Any

from .._redact import MASK, is_secret_name, is_secret_variable, redact_text
from ._disclosure import EvidencePolicy
from ._render import ReprBudget, cut, render

CAUSES = 5  # chained exceptions followed
ATTRIBUTES = 12  # attributes of one exception
FRAMES = 6  # frames between the decorated function and the raise
LOCALS = 60  # locals of one frame
_PLAIN_ATTRIBUTES = frozenset({"args", "with_traceback", "add_note", "__notes__", "__traceback__", "__cause__",
                               "__context__", "__suppress_context__", "reason", "details"})


def values(named: Mapping[str, Any], budget: ReprBudget, limit: int = LOCALS) -> dict[str, str]:
    """Each value rendered and redacted (by its name, then by what it looks like); dunders left out."""
    shown: dict[str, str] = {}
    for name, value in named.items():
        if name.startswith("__") or not isinstance(name, str):
            continue
        if len(shown) >= limit:
            shown["..."] = f"{len(named) - limit} more"
            break
        shown[name] = MASK if is_secret_name(name) else redact_text(render(value, budget))
    return shown


def attributes(exc: BaseException, budget: ReprBudget) -> dict[str, str]:
    """The exception's own attributes (``response``, ``status_code``, ``errno``…), from its ``__dict__``."""
    try:
        own = dict(object.__getattribute__(exc, "__dict__"))
    except Exception:
        return {}
    named = {name: value for name, value in own.items() if not name.startswith("_") and name not in _PLAIN_ATTRIBUTES}
    return values(named, budget, ATTRIBUTES)


def causes(exc: BaseException, budget: ReprBudget) -> tuple[str, ...]:
    """The chain below ``exc`` (``__cause__``, else a ``__context__`` not suppressed), one line each."""
    found: list[str] = []
    seen = {id(exc)}
    current: BaseException | None = exc
    while current is not None and len(found) < CAUSES:
        explicit = current.__cause__ is not None
        current = current.__cause__ if explicit else None if current.__suppress_context__ else current.__context__
        if current is None or id(current) in seen:
            break
        seen.add(id(current))
        how = "caused by" if explicit else "while handling"
        where = _where(current)
        shown = attributes(current, budget)
        extra = f" ({', '.join(f'{k}={v}' for k, v in shown.items())})" if shown else ""
        found.append(redact_text(cut(f"{how} {_name(current)}: {_message(current)}{where}{extra}", budget.limit)))
    return tuple(found)


def frames_between(frames: Sequence[tuple[types.FrameType, int]], own: int, budget: ReprBudget,
                   hidden: tuple[str, ...]) -> tuple[str, ...]:
    """The frames after the user's own (index ``own``), up to the raise: ``helper() at file:line: a=1, b=2``."""
    shown = []
    for frame, lineno in frames[own + 1 :][-FRAMES:]:
        filename = frame.f_code.co_filename
        if filename.startswith(hidden):
            continue
        local = values(dict(frame.f_locals), budget, ATTRIBUTES)
        listed = ", ".join(f"{name}={value}" for name, value in local.items())
        shown.append(cut(f"{frame.f_code.co_name}() at {os.path.basename(filename)}:{lineno}: {listed}", 600))
    return tuple(shown)


def environment(policy: EvidencePolicy) -> dict[str, str]:
    """The allowed environment variables that are set (nothing else is read), redacted by name and value."""
    shown = {}
    for name in policy.env_allowlist:
        value = os.environ.get(name)
        if value is None:
            continue
        shown[name] = MASK if is_secret_variable(name, value) else redact_text(cut(value, policy.value_limit))
    return shown


def budget_of(policy: EvidencePolicy) -> ReprBudget:
    return ReprBudget(policy.repr_budget, policy.value_limit, policy.redaction.render)


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    if tb is None:
        return ""
    last = traceback.extract_tb(tb)[-1]
    return f" at {os.path.basename(last.filename)}:{last.lineno}"


def _name(exc: BaseException) -> str:
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"

"""Values shown as evidence, bounded: never an unguarded ``repr``.

A value is rendered from what can be read without running the user's code where possible: its
type, its length or shape, and a preview of its first items. Builtin scalars and containers are
walked here (a 10 GB string or list costs its first items, not its size); arrays and frames of
numpy, pandas and torch give their shape and dtype without a repr of their data; any other object
with a ``repr`` of its own gets that repr on a worker thread under a time limit, and a time budget
per capture after which no more user code runs at all. A ``repr`` that raises, hangs, does I/O or
returns something huge ends as a short placeholder, never as a stalled or broken capture.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
import types
from collections.abc import Callable
from typing import Any

from .._redact import MASK, is_secret_name
from .._sandbox import InProcessSandbox, Limits

ITEMS = 12  # items shown of a container
DEPTH = 3  # containers shown inside containers
STRING = 160  # characters shown of one string
REPR_SECONDS = 0.1  # one user repr
BUDGET_SECONDS = 0.5  # every user repr of one capture together
_SCALARS = (bool, int, float, complex, type(None))
_ARRAY_MODULES = ("numpy", "pandas", "torch", "jax", "tensorflow", "xarray", "polars", "cupy", "dask")


@functools.cache
def _sandbox() -> InProcessSandbox:
    return InProcessSandbox()


class ReprBudget:
    """The time one capture may spend in the user's ``repr`` methods; ``limit``: characters a value."""

    def __init__(self, seconds: float = BUDGET_SECONDS, limit: int = 400,
                 hook: Callable[[object], str | None] | None = None) -> None:
        self.end = time.monotonic() + seconds
        self.limit = limit
        self.hook = hook
        self.lock = threading.RLock()

    def left(self) -> float:
        return self.end - time.monotonic()


def render(value: object, budget: ReprBudget | None = None) -> str:
    """``value`` as bounded text: at most ``budget.limit`` characters, never raising."""
    budget = budget or ReprBudget()
    try:
        text = _render(value, budget, DEPTH)
    except Exception as exc:  # nothing about one value may break a capture
        text = f"<{_type(value)} (not shown: {type(exc).__name__})>"
    return cut(text, budget.limit)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def _type(value: object) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    name = str(getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "object"))
    return name if module in ("builtins", "") else f"{module.split('.')[0]}.{name}"


def _render(value: object, budget: ReprBudget, depth: int) -> str:
    if budget.hook is not None:
        shown = _hooked(value, budget)
        if shown is not None:
            return shown
    kind = type(value)
    if kind in _SCALARS:
        return _scalar(value)
    if kind is str:
        return _string(value)  # type: ignore[arg-type]
    if kind in (bytes, bytearray, memoryview):
        return _bytes(value)  # type: ignore[arg-type]
    containers = (list, tuple, dict, set, frozenset)
    builtin_like = isinstance(value, containers) and type(kind.__repr__) is not types.FunctionType
    if kind in containers or builtin_like:
        return _container(value, budget, depth)
    if (getattr(kind, "__module__", "") or "").split(".")[0] in _ARRAY_MODULES:
        return _array(value)
    if isinstance(value, BaseException):
        return f"{_type(value)}({_string(_message(value))})"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, types.ModuleType)):
        return f"<{_type(value)} {getattr(value, '__qualname__', getattr(value, '__name__', '?'))}>"
    if dataclasses.is_dataclass(value):
        return _fields(value, budget, depth, [f.name for f in dataclasses.fields(value)])
    if type(kind.__repr__) is types.FunctionType:  # a repr written in Python: time-bounded, or the fields
        return _user_repr(value, budget, depth)
    return _builtin_repr(value, budget.limit)


def _scalar(value: object) -> str:
    if isinstance(value, int) and value.bit_length() > 1024:
        return f"<int of {value.bit_length()} bits>"
    return repr(value)


def _string(text: str) -> str:
    if len(text) <= STRING:
        return repr(text)
    return f"<{len(text)} characters> {text[:STRING]!r}..."


def _bytes(data: bytes | bytearray | memoryview) -> str:
    size = data.nbytes if isinstance(data, memoryview) else len(data)
    head = bytes(data[: STRING // 2])
    return repr(bytes(data)) if size <= STRING // 2 else f"<{size} bytes> {head!r}..."


def _container(value: Any, budget: ReprBudget, depth: int) -> str:
    size = len(value)
    name = type(value).__name__
    if depth <= 0:
        return f"<{name} of {size} items>"
    if isinstance(value, dict):
        items = []
        for index, (key, item) in enumerate(value.items()):
            if index >= ITEMS:
                break
            shown = MASK if isinstance(key, str) and is_secret_name(key) else _render(item, budget, depth - 1)
            items.append(f"{_render(key, budget, depth - 1)}: {shown}")
        inner, (left, right) = ", ".join(items), ("{", "}")
    else:
        shown_items = [_render(item, budget, depth - 1) for _, item in zip(range(ITEMS), value, strict=False)]
        inner = ", ".join(shown_items)
        left, right = "[]" if isinstance(value, list) else "()" if isinstance(value, tuple) else "{}"
        if isinstance(value, tuple) and size == 1:
            inner += ","
    more = ", ..." if size > ITEMS else ""
    text = f"{left}{inner}{more}{right}" if size <= ITEMS else f"<{size} items> {left}{inner}{more}{right}"
    base = type(value) in (list, tuple, dict, set)
    return text if base else f"{_type(value)}({text})"


def _array(value: object) -> str:
    """An array or frame by its shape and dtype: attributes of the library's own C types, no data read."""
    parts = []
    for name in ("shape", "dtype"):
        try:
            attribute = getattr(value, name)
        except Exception:
            continue
        parts.append(f"{name}={_builtin_repr(attribute, 80) if name == 'dtype' else tuple(attribute)!s}")
    return f"<{_type(value)} {' '.join(parts)}>" if parts else f"<{_type(value)}>"


def _fields(value: object, budget: ReprBudget, depth: int, names: list[str]) -> str:
    """``Type(a=…, b=…)`` from the instance's own ``__dict__`` (no property or ``__getattr__`` runs)."""
    try:
        own = object.__getattribute__(value, "__dict__")
    except Exception:
        own = {}
    shown = []
    for name in [n for n in names if n in own][:ITEMS] if names else [n for n in own if not n.startswith("_")][:ITEMS]:
        item = own[name]
        shown.append(f"{name}={MASK if is_secret_name(name) else _render(item, budget, depth - 1)}")
    return f"{_type(value)}({', '.join(shown)})"


def _user_repr(value: object, budget: ReprBudget, depth: int) -> str:
    with budget.lock:  # one user repr at a time, each within what is left of the budget
        left = min(REPR_SECONDS, budget.left())
        outcome = _sandbox().call(repr, value, limits=Limits(timeout=left)) if left > 0 else None
        if outcome is not None and outcome.status == "timeout":
            budget.end = min(budget.end, time.monotonic())  # a hanging repr: no more user code in this capture
    if outcome is None:
        return f"<{_type(value)} (repr not called: time budget spent)> " + _fields(value, budget, depth, [])
    if outcome.status == "timeout":
        return f"<{_type(value)} (repr timed out)> " + _fields(value, budget, depth, [])
    if not outcome.ok or not isinstance(outcome.value, str):
        kind = outcome.error.type if outcome.error else outcome.status
        return f"<{_type(value)} (repr raised {kind})> " + _fields(value, budget, depth, [])
    return cut(outcome.value, budget.limit)


def _builtin_repr(value: object, limit: int) -> str:
    """The repr of a C type's instance (no Python code of the user's runs), bounded."""
    try:
        return cut(repr(value), limit)
    except Exception as exc:
        return f"<{_type(value)} (repr raised {type(exc).__name__})>"


def _hooked(value: object, budget: ReprBudget) -> str | None:
    hook = budget.hook
    assert hook is not None
    try:
        shown = hook(value)
    except Exception as exc:
        return f"<{_type(value)} (render hook raised {type(exc).__name__})>"
    return cut(shown, budget.limit) if isinstance(shown, str) else None


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"

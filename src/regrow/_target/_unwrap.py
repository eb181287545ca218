"""From what the user points at to the ``def`` to heal: through decorators, wrappers and descriptors.

A module attribute is often not the function itself: a ``functools.wraps`` wrapper, an
``lru_cache``, a ``property``, a click command, a curry-style class holding the function. The
function to heal is the ``def`` — found by following ``__wrapped__``, ``__func__``, ``fget`` and the
attributes and closure cells such objects keep, to the plain function whose code is its own (its
code's name is its name). Installing a fix swaps that function's ``__code__``, so whatever wraps it
runs the fix.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections import deque
from typing import Any

from .._errors import TargetError

_HOLDERS = ("__wrapped__", "__func__", "fget", "func", "callback", "function", "fn", "f", "_func", "wrapped")
_MAX_NODES = 200


def _own_code(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s code is the definition its name says (not a wrapper that copied the name)."""
    code = fn.__code__
    qualname = getattr(code, "co_qualname", None)
    return code.co_name == fn.__name__ and (qualname is None or qualname == fn.__qualname__)


def _inside(obj: Any) -> list[Any]:
    """The objects ``obj`` holds that may be the function it wraps."""
    found = [getattr(obj, name) for name in _HOLDERS if _has(obj, name)]
    if isinstance(obj, types.FunctionType):
        found += [cell.cell_contents for cell in obj.__closure__ or () if _filled(cell)]
    elif not isinstance(obj, (type, types.ModuleType)):
        with contextlib.suppress(TypeError):  # no __dict__
            found += [value for value in vars(obj).values() if callable(value)]
    return found


def _has(obj: Any, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:  # a property that raises
        return False


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises ValueError
    except ValueError:
        return False
    return True


def find_def(obj: Any, qualname: str | None = None) -> types.FunctionType | None:
    """The plain function inside ``obj`` (breadth first), preferring the one named ``qualname``."""
    queue, seen, candidates = deque([obj]), {id(obj)}, []
    while queue and len(seen) < _MAX_NODES:
        item = queue.popleft()
        state = getattr(item, "__regrow__", None)
        if state is not None and isinstance(getattr(state, "func", None), types.FunctionType):
            item = state.func
        if isinstance(item, types.FunctionType) and _own_code(item):
            if qualname is None or item.__qualname__ == qualname:
                return item
            candidates.append(item)
        for inner in _inside(item):
            if id(inner) not in seen:
                seen.add(id(inner))
                queue.append(inner)
    return candidates[0] if qualname is None and candidates else None


def unwrap(obj: Any, qualname: str | None = None) -> types.FunctionType:
    """The plain Python function behind ``obj``, or a :class:`TargetError` saying why there is none."""
    if isinstance(obj, functools.partial):
        raise TargetError("functools.partial objects cannot be healed; heal the function they wrap")
    if isinstance(obj, types.BuiltinFunctionType):
        raise TargetError(f"{obj!r} is a builtin or C function; only functions written in Python can be healed")
    found = find_def(obj, qualname or getattr(obj, "__qualname__", None))
    if found is None:
        found = find_def(obj)
    if found is None:
        raise TargetError(f"{obj!r} is a {type(obj).__name__} with no Python function inside; only functions "
                          "written in Python can be healed")
    reason = _unwrapped_wrapper(found) or refusal(found)
    if reason:
        raise TargetError(reason)
    return found


def _unwrapped_wrapper(func: types.FunctionType) -> str:
    """What to add when ``func`` is a decorator's wrapper that does not say what it wraps, or ``""``.

    Without ``functools.wraps`` the module's name is bound to the wrapper, named for the decorator's
    inner ``def``: healing that would rewrite the decorator. The wrapped function is in the wrapper's
    closure, and ``functools.wraps`` is the one line that lets regrow (and every other tool) reach it."""
    if "<locals>" not in func.__qualname__:
        return ""
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=False):
        inner = cell.cell_contents if _filled(cell) else None
        if isinstance(inner, types.FunctionType) and _own_code(inner) and not refusal(inner):
            decorator = func.__qualname__.split(".<locals>")[0]
            return (f"{func.__module__}.{inner.__qualname__} is under the decorator {func.__module__}.{decorator}, "
                    f"whose wrapper `{func.__name__}` does not say what it wraps, so regrow reaches the wrapper, not "
                    f"the function: add @functools.wraps({name}) above `def {func.__name__}` in {decorator}")
    return ""


def refusal(func: types.FunctionType) -> str:
    """Why ``func`` cannot be healed, or ``""``. Cheap: reads no source."""
    name = func.__qualname__
    if func.__name__ == "<lambda>":
        return f"{func.__module__}.{name} is a lambda; give it a name with def to heal it"
    if "<locals>" in name:
        return (
            f"{func.__module__}.{name} is nested in another function; its source and closure belong to each "
            "call of the enclosing function, so it cannot be healed — move it to module or class level"
        )
    return ""

"""What one run of a call did, as text two runs can be compared on, and the copies each run gets.

A method's effect is often on its receiver, and a default ``repr`` (``<Cache object>``) hides it,
so :func:`render` (:mod:`regrow._checks._render`) writes out an object's state.

Each run gets a deep copy of the inputs of its own (:func:`fresh`), so a mutating method cannot
spoil the next comparison. :func:`copyable` lets locks be copied (as new locks) and modules be
kept (as themselves) while a judgement runs: a receiver that holds a lock is an object like any
other. It changes ``copyreg``, so it is meant for a worker, and undoes what it did.
"""

from __future__ import annotations

import contextlib
import copy
import copyreg
import threading
import types
from collections.abc import Iterator
from typing import Any

from ..._checks._render import NAMED as _NAMED
from ..._checks._render import PLAIN as _PLAIN
from ..._checks._render import render

__all__ = ["Uncopyable", "copyable", "fresh", "render"]

_KEPT: dict[int, Any] = {}  # objects copied as themselves while copyable() is on


class Uncopyable(Exception):
    """A call's inputs that cannot be copied for a run of their own."""


def fresh(inputs: tuple[tuple[Any, ...], dict[str, Any]]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A deep copy of a call's arguments; :class:`Uncopyable` when there is none that shares nothing
    mutable with ``inputs`` at the top (a ``__deepcopy__`` that returns the object itself, say)."""
    memo: dict[int, Any] = {}
    try:
        for value in [*inputs[0], *inputs[1].values()]:
            if _by_name(value):
                memo[id(value)] = _by_state(value, memo)
        args, kwargs = copy.deepcopy(inputs, memo)
    except Exception as exc:
        raise Uncopyable(f"{type(exc).__name__}: {exc}") from exc
    for mine, theirs in zip([*args, *kwargs.values()], [*inputs[0], *inputs[1].values()], strict=False):
        if mine is theirs and not isinstance(mine, (*_PLAIN, *_NAMED, frozenset, range)) and not _frozen(mine):
            raise Uncopyable(f"a copy of a {type(mine).__name__} is the object itself")
    return tuple(args), dict(kwargs)


def _by_name(value: Any) -> bool:
    """An object with state of its own that copies as itself: it pickles by name, as a function does (a
    decorator's wrapper object, say)."""
    if isinstance(value, (*_PLAIN, *_NAMED)) or not isinstance(getattr(value, "__dict__", None), dict):
        return False
    try:
        return isinstance(value.__reduce_ex__(4), str)
    except Exception:
        return False


def _by_state(value: Any, memo: dict[int, Any]) -> Any:
    """A new object of ``value``'s class with a deep copy of its ``__dict__``."""
    made = object.__new__(type(value))
    memo[id(value)] = made
    made.__dict__.update(copy.deepcopy(value.__dict__, memo))
    return made


def _frozen(value: Any) -> bool:
    return type(value) is tuple and all(isinstance(item, _PLAIN) for item in value)


def _keep(value: Any) -> tuple[Any, tuple[int]]:
    _KEPT[id(value)] = value
    return _KEPT.__getitem__, (id(value),)


def _new_lock(lock: Any) -> tuple[Any, tuple[()]]:
    return threading.Lock, ()


def _new_rlock(lock: Any) -> tuple[Any, tuple[()]]:
    return threading.RLock, ()


@contextlib.contextmanager
def copyable() -> Iterator[None]:
    """Inside: a lock deep-copies as a new lock, a module as itself (both refuse to otherwise)."""
    table: dict[type, Any] = copyreg.dispatch_table
    extra: dict[type, Any] = {type(threading.Lock()): _new_lock, type(threading.RLock()): _new_rlock,
                              types.ModuleType: _keep}
    saved = {kind: table.get(kind) for kind in extra}
    table.update(extra)
    try:
        yield
    finally:
        for kind, before in saved.items():
            if before is None:
                table.pop(kind, None)
            else:
                table[kind] = before
        _KEPT.clear()

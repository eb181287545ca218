"""What one run of a call did, as text two runs can be compared on, and the copies each run gets.

A method's effect is often on its receiver, and a default ``repr`` (``<Cache object>``) hides it,
so :func:`render` writes out an object's state: its type's name, its attributes (``__dict__`` and
slots) and its items, recursively, without addresses and without following a cycle. Shared
objects are written out where they occur; a rendering stops after :data:`_NODES` values.

Each run gets a deep copy of the inputs of its own (:func:`fresh`), so a mutating method cannot
spoil the next comparison. :func:`copyable` lets locks be copied (as new locks) and modules be
kept (as themselves) while a judgement runs: a receiver that holds a lock is an object like any
other. It changes ``copyreg``, so it is meant for a worker, and undoes what it did.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import copyreg
import re
import threading
import types
from collections.abc import Iterator
from typing import Any

_NODES = 4000  # values one rendering writes out; the rest is "…"
_CHARS = 200_000
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_NAMED = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
          types.MethodWrapperType, types.WrapperDescriptorType)
_BUILTIN = (dict, set, frozenset, tuple, list, collections.deque)
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


def render(value: Any) -> str:
    """``value`` written out with its state (see the module's text), the same for equal states."""
    writer = _Writer()
    writer.walk(value, set())
    return "".join(writer.out)


def _slots(kind: type) -> list[str]:
    names: list[str] = []
    for klass in kind.__mro__:
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in ("__dict__", "__weakref__"):
                continue
            private = name.startswith("__") and not name.endswith("__")
            mangled = f"_{klass.__name__.lstrip('_')}{name}" if private else name
            if mangled not in names:
                names.append(mangled)
    return names


def _shown(value: Any) -> str:
    try:
        return _ADDRESS.sub("", repr(value))
    except Exception:
        return f"<{type(value).__qualname__}>"


class _Writer:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.nodes = 0
        self.chars = 0

    def put(self, text: str) -> None:
        self.out.append(text)
        self.chars += len(text)

    def walk(self, value: Any, path: set[int]) -> None:
        self.nodes += 1
        if self.nodes > _NODES or self.chars > _CHARS:
            if self.nodes == _NODES + 1 or self.chars <= _CHARS:
                self.put("…")
            return
        kind = type(value)
        if isinstance(value, _PLAIN) and kind in _PLAIN:
            self.put(repr(value))
            return
        if isinstance(value, _NAMED):
            name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
            self.put(f"<{kind.__name__} {name}>")
            return
        if id(value) in path:
            self.put("<cycle>")
            return
        path.add(id(value))
        try:
            self.compound(value, kind, path)
        finally:
            path.discard(id(value))

    def compound(self, value: Any, kind: type, path: set[int]) -> None:
        if kind not in _BUILTIN:  # a subclass of a built-in, or any other object: named by its type
            self.put(kind.__qualname__)
        if isinstance(value, _PLAIN):  # a subclass of int, str, ...: its value, then its attributes
            base: Any = next(klass for klass in kind.__mro__ if klass in _PLAIN)
            self.put(f"={_shown(base(value))}")
        elif isinstance(value, dict):
            self.pairs("{", list(value.items()), ": ", "}", path)
        elif isinstance(value, (set, frozenset)):
            self.put("{" + ", ".join(sorted(render(item) for item in value)) + "}")
        elif isinstance(value, tuple):
            self.sequence("(", list(value), ")", path)
        elif isinstance(value, (list, collections.deque)):
            self.sequence("[", list(value), "]", path)
        elif isinstance(value, BaseException):
            self.walk(value.args, path)
        attributes = self.attributes(value)
        if attributes is not None:
            self.pairs("(", attributes, "=", ")", path)
        elif not isinstance(value, (*_BUILTIN, *_PLAIN, BaseException)):
            self.put(f"<{_shown(value)}>")

    def sequence(self, opening: str, items: list[Any], closing: str, path: set[int]) -> None:
        self.put(opening)
        for at, item in enumerate(items):
            self.put(", " if at else "")
            self.walk(item, path)
        self.put(closing)

    def pairs(self, opening: str, pairs: list[tuple[Any, Any]], between: str, closing: str, path: set[int]) -> None:
        """A mapping's items (``key: value``) or an object's attributes (``name=value``)."""
        self.put(opening)
        for at, (key, item) in enumerate(pairs):
            self.put(", " if at else "")
            if isinstance(key, str) and between == "=":
                self.put(key)
            else:
                self.walk(key, path)
            self.put(between)
            self.walk(item, path)
        self.put(closing)

    @staticmethod
    def attributes(value: Any) -> list[tuple[str, Any]] | None:
        """The object's own state: ``__dict__`` and slots, or ``None`` for an object with neither."""
        found: list[tuple[str, Any]] = []
        own = getattr(value, "__dict__", None)
        has_dict = isinstance(own, dict)
        if isinstance(own, dict):
            found.extend(sorted(own.items(), key=lambda item: str(item[0])))
        slots = _slots(type(value))
        for name in slots:
            try:
                found.append((name, object.__getattribute__(value, name)))
            except AttributeError:
                found.append((name, "<unset>"))
        return found if has_dict or slots else None

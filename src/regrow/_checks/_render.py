"""An object written out with its state, as text two runs can be compared on.

A method's effect is often on its receiver, and a default ``repr`` (``<Cache object>``) hides it, as
may a class's own (``LFUCache({1: 1}, maxsize=2)`` leaves out its use counts), so :func:`render` writes
out an object's state: its type's name, its attributes (``__dict__`` and slots) and its items,
recursively, without addresses and without following a cycle. Shared objects are written out where
they occur; a rendering stops after :data:`_NODES` values.
"""

from __future__ import annotations

import collections
import re
import types
from typing import Any

_NODES = 4000  # values one rendering writes out; the rest is "…"
_CHARS = 200_000
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # in a default repr: differs every run, says nothing
PLAIN = (type(None), bool, int, float, complex, str, bytes)
NAMED = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
         types.MethodWrapperType, types.WrapperDescriptorType)
_BUILTIN = (dict, set, frozenset, tuple, list, collections.deque)


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


def readable(value: Any) -> str:
    """``value``'s repr for a reader, or where that is a default one (``<shop.Order object at 0x7f…>``, which says
    nothing and differs every run) its state written out: ``Order(price=3.5, qty=2)``."""
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__qualname__}>"
    return render(value) if ADDRESS.search(text) else text


def _shown(value: Any) -> str:
    try:
        return ADDRESS.sub("", repr(value))
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
        if isinstance(value, PLAIN) and kind in PLAIN:
            self.put(repr(value))
            return
        if isinstance(value, NAMED):
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
        if isinstance(value, PLAIN):  # a subclass of int, str, ...: its value, then its attributes
            base: Any = next(klass for klass in kind.__mro__ if klass in PLAIN)
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
        elif not isinstance(value, (*_BUILTIN, *PLAIN, BaseException)):
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

"""Values written down as tagged plain data (the sandbox's side of :mod:`regrow._plain`).

The encoded form is JSON-safe: lists, strings and booleans, each node a list whose first item is a
tag. What has no faithful plain form — an object whose class has its own ``__new__``, a value too
deep or too large, one whose ``repr`` raises — is tagged opaque. Encoding never raises: it runs in
the sandbox on whatever the candidate returned, and in the host on the host's own values (to
compare them with a record).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import fractions
import hashlib
import json
import sys
import uuid
from typing import Any

_OBJECT_NEW: object = object.__new__
MAX_DEPTH = 40
MAX_NODES = 50_000
MAX_REPR = 400
_ATOMS: dict[type, str] = {int: "I", float: "F", complex: "C"}
_SEQUENCES: dict[type, str] = {list: "L", tuple: "T", set: "E", frozenset: "FE"}
KNOWN_TYPES: dict[str, type] = {
    "decimal.Decimal": decimal.Decimal, "fractions.Fraction": fractions.Fraction, "uuid.UUID": uuid.UUID,
}  # fmt: skip
DATE_TYPES: dict[str, type] = {
    "datetime.datetime": datetime.datetime, "datetime.date": datetime.date, "datetime.time": datetime.time,
}  # fmt: skip


class PlainError(ValueError):
    """Encoded data that is malformed (it came from a process that ran untrusted code)."""


class Opaque:
    """A value with no faithful plain form: it is equal only to itself."""

    __slots__ = ("shown", "type_name")

    def __init__(self, type_name: str, shown: str) -> None:
        self.type_name, self.shown = type_name, shown

    def __repr__(self) -> str:
        return f"<{self.type_name} (not plain data): {self.shown}>"


def type_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "…"


class _Encoder:
    def __init__(self) -> None:
        self.nodes = 0

    def __call__(self, value: Any, depth: int = 0) -> list[Any]:
        self.nodes += 1
        kind = type(value)
        if value is None:
            return ["N"]
        if kind is bool:
            return ["B", value]
        if kind is str:
            return ["S", value]
        if kind in _ATOMS:
            try:
                return [_ATOMS[kind], repr(value)]
            except ValueError:  # an int past the digit limit of str()
                return ["O", "int", "<a very large int>"]
        if kind is bytes or kind is bytearray:
            return ["Y" if kind is bytes else "YA", base64.b64encode(value).decode("ascii")]
        if depth >= MAX_DEPTH or self.nodes > MAX_NODES:
            return ["O", type_name(kind), "<too deep or too large to compare>"]
        if kind in _SEQUENCES:
            items = [self(item, depth + 1) for item in value]
            if kind in (set, frozenset):
                items.sort(key=_key)
            return [_SEQUENCES[kind], items]
        if kind is dict:
            return ["D", [[self(k, depth + 1), self(v, depth + 1)] for k, v in value.items()]]
        if isinstance(value, BaseException):
            return ["X", type_name(kind), [self(arg, depth + 1) for arg in value.args]]
        return self._other(value, kind, depth)

    def _other(self, value: Any, kind: type, depth: int) -> list[Any]:
        name = type_name(kind)
        if name in KNOWN_TYPES:
            return ["K", name, str(value)]
        if name in DATE_TYPES or kind is datetime.timedelta:
            shown = repr(value.total_seconds()) if kind is datetime.timedelta else value.isoformat()
            return ["K", "datetime.timedelta" if kind is datetime.timedelta else name, shown]
        if isinstance(value, enum.Enum) and findable(kind):
            return ["EN", name, value.name]
        if findable(kind) and isinstance(value, tuple) and hasattr(kind, "_fields"):
            return ["NT", name, [self(item, depth + 1) for item in value]]
        state = _state(value, kind)
        if state is not None:
            return ["A", name, [[key, self(item, depth + 1)] for key, item in state]]
        return ["O", name, _shown(value)]


def own_new(kind: type) -> bool:
    """Whether ``kind`` makes its instances with a ``__new__`` of its own (they cannot be rebuilt safely)."""
    new: object = kind.__new__
    return new is not _OBJECT_NEW


def findable(kind: type) -> bool:
    """Whether the host can find ``kind`` again by module and qualname (not made inside a function)."""
    return "<" not in kind.__qualname__ and kind.__module__ in sys.modules


def _state(value: Any, kind: type) -> list[tuple[str, Any]] | None:
    """The attributes an instance of a plain user class is made of, or ``None`` when it is not one."""
    if not findable(kind) or own_new(kind) or kind.__module__ == "builtins":
        return None
    if dataclasses.is_dataclass(value):
        return [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return None
    return sorted(attributes.items()) if type(attributes) is dict else None


def _key(node: list[Any]) -> str:
    return json.dumps(node, sort_keys=True)


def encode(value: Any) -> list[Any]:
    """``value`` as tagged plain data (never raises; what cannot be encoded is tagged opaque)."""
    try:
        return _Encoder()(value)
    except RecursionError:
        return ["O", type_name(type(value)), "<too deep to compare>"]
    except Exception as exc:  # a property or a repr that raises: the value is not comparable
        return ["O", type_name(type(value)), f"<cannot be read: {type(exc).__name__}>"]


def digest(node: Any) -> str:
    """A short stable name for encoded data (to compare without sending it twice)."""
    return hashlib.sha256(_key(node).encode("utf-8", "surrogatepass")).hexdigest()[:32]

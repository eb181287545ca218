"""Values as tagged plain data, so that a verdict can be reached where the candidate cannot reach.

A candidate's results are recorded in the sandbox as plain data (:func:`encode`) and rebuilt in the
trusted host (:func:`decode`) with the host's own types: a ``float`` comes back a ``float``, never
a subclass whose ``__eq__`` says yes to everything. What has no faithful plain form — an object of a
class the host cannot find, a class made inside the candidate, a type with its own ``__new__`` —
comes back as an :class:`Opaque` that equals nothing but itself; a check that fails on one says
so, and the session decides what that means (see :mod:`regrow._transcript`).

The encoded form is JSON-safe: lists, strings and booleans, each node a list whose first item is a
tag. Decoding is strict, since the data comes from a process that ran untrusted code.
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
_MAX_REPR = 400
_ATOMS: dict[type, str] = {int: "I", float: "F", complex: "C"}
_SEQUENCES: dict[type, str] = {list: "L", tuple: "T", set: "E", frozenset: "FE"}
_STDLIB: dict[str, type] = {
    "decimal.Decimal": decimal.Decimal, "fractions.Fraction": fractions.Fraction, "uuid.UUID": uuid.UUID,
}  # fmt: skip
_DATES: dict[str, type] = {
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
    return text if len(text) <= _MAX_REPR else text[:_MAX_REPR] + "…"


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
        if name in _STDLIB:
            return ["K", name, str(value)]
        if name in _DATES or kind is datetime.timedelta:
            shown = repr(value.total_seconds()) if kind is datetime.timedelta else value.isoformat()
            return ["K", "datetime.timedelta" if kind is datetime.timedelta else name, shown]
        if isinstance(value, enum.Enum) and _findable(kind):
            return ["EN", name, value.name]
        if _findable(kind) and isinstance(value, tuple) and hasattr(kind, "_fields"):
            return ["NT", name, [self(item, depth + 1) for item in value]]
        state = _state(value, kind)
        if state is not None:
            return ["A", name, [[key, self(item, depth + 1)] for key, item in state]]
        return ["O", name, _shown(value)]


def _own_new(kind: type) -> bool:
    """Whether ``kind`` makes its instances with a ``__new__`` of its own (they cannot be rebuilt safely)."""
    new: object = kind.__new__
    return new is not _OBJECT_NEW


def _findable(kind: type) -> bool:
    """Whether the host can find ``kind`` again by module and qualname (not made inside a function)."""
    return "<" not in kind.__qualname__ and kind.__module__ in sys.modules


def _state(value: Any, kind: type) -> list[tuple[str, Any]] | None:
    """The attributes an instance of a plain user class is made of, or ``None`` when it is not one."""
    if not _findable(kind) or _own_new(kind) or kind.__module__ == "builtins":
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


def has_opaque(node: Any) -> bool:
    """Whether encoded data holds a value that had no faithful plain form."""
    if isinstance(node, list) and node and node[0] == "O":
        return True
    return isinstance(node, list) and any(has_opaque(item) for item in node[1:] if isinstance(item, list))


# -- decoding (in the trusted host) ---------------------------------------------------------------


def decode(node: Any, namespace: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """The value ``node`` encodes, built from the host's own types; :class:`PlainError` if malformed.

    ``namespace`` (the target's module globals) is where exception and user classes are looked up
    first; classes are also found by module and qualname among modules already imported, never
    by importing.
    """
    if type(node) is not list or not node or type(node[0]) is not str or depth > MAX_DEPTH + 2:
        raise PlainError("not an encoded value")
    tag, rest = node[0], node[1:]
    try:
        return _DECODERS[tag](rest, namespace, depth)
    except KeyError:
        raise PlainError(f"unknown tag {tag!r}") from None
    except (TypeError, ValueError, IndexError, decimal.InvalidOperation, OverflowError) as exc:
        if isinstance(exc, PlainError):
            raise
        raise PlainError(f"malformed {tag!r} value: {exc}") from None


def _text(item: Any) -> str:
    if type(item) is not str:
        raise PlainError("expected a string")
    return item


def _flag(item: Any) -> bool:
    if type(item) is not bool:
        raise PlainError("expected a boolean")
    return item


def _items(item: Any) -> list[Any]:
    if type(item) is not list:
        raise PlainError("expected a list")
    return item


def _atom(kind: type) -> Any:
    def read(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
        text = _text(rest[0])
        if kind is complex:
            return complex(text)
        return kind(text) if kind is int else float(text)

    return read


def _sequence(kind: type) -> Any:
    def read(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
        return kind(decode(item, namespace, depth + 1) for item in _items(rest[0]))

    return read


def _mapping(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
    pairs = _items(rest[0])
    return {decode(_items(pair)[0], namespace, depth + 1): decode(pair[1], namespace, depth + 1) for pair in pairs}


def _bytes(kind: type) -> Any:
    def read(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
        return kind(base64.b64decode(_text(rest[0]), validate=True))

    return read


def find_class(name: str, namespace: dict[str, Any] | None) -> type | None:
    """The class ``module.qualname`` among loaded modules (no import), or ``None``."""
    if "." not in name:
        import builtins

        found = getattr(builtins, name, None)
        return found if isinstance(found, type) else None
    module_name, _, qualname = name.rpartition(".")
    holder: Any = sys.modules.get(module_name)
    while holder is None and "." in module_name:  # a nested class: module.Outer.Inner
        module_name, _, outer = module_name.rpartition(".")
        qualname = f"{outer}.{qualname}"
        holder = sys.modules.get(module_name)
    if holder is None:
        return None
    for part in qualname.split("."):
        holder = getattr(holder, part, None)
    return holder if isinstance(holder, type) else None


def _exception(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> BaseException:
    name = _text(rest[0])
    args = tuple(decode(arg, namespace, depth + 1) for arg in _items(rest[1]))
    kind = find_class(name, namespace)
    if kind is None or not issubclass(kind, BaseException):
        return RaisedElsewhere(name, args)
    exc = kind.__new__(kind)  # no __init__: the host runs none of the exception's code
    exc.args = args
    return exc


class RaisedElsewhere(Exception):
    """An exception of a type the host cannot find (made by the candidate, or not imported here)."""

    def __init__(self, name: str, args: tuple[Any, ...]) -> None:
        super().__init__(f"{name}{args!r}")
        self.type_name = name


def _known(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
    name, text = _text(rest[0]), _text(rest[1])
    if name in _STDLIB:
        return _STDLIB[name](text)
    if name == "datetime.timedelta":
        return datetime.timedelta(seconds=float(text))
    if name in _DATES:
        return _DATES[name].fromisoformat(text)  # type: ignore[attr-defined]
    raise PlainError(f"unknown type {name!r}")


def _member(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
    kind = find_class(_text(rest[0]), namespace)
    if kind is None or not issubclass(kind, enum.Enum):
        return Opaque(_text(rest[0]), _text(rest[1]))
    return kind[_text(rest[1])]


def _named_tuple(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
    kind = find_class(_text(rest[0]), namespace)
    items = [decode(item, namespace, depth + 1) for item in _items(rest[1])]
    if kind is None or not issubclass(kind, tuple) or not hasattr(kind, "_make"):
        return Opaque(_text(rest[0]), repr(tuple(items)))
    return kind._make(items)


def _instance(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Any:
    name = _text(rest[0])
    kind = find_class(name, namespace)
    state = [(_text(_items(pair)[0]), decode(pair[1], namespace, depth + 1)) for pair in _items(rest[1])]
    if kind is None or _own_new(kind):
        return Opaque(name, ", ".join(f"{key}={value!r}" for key, value in state)[:_MAX_REPR])
    made: Any = object.__new__(kind)
    for key, value in state:
        object.__setattr__(made, key, value)  # frozen dataclasses too; no __init__ or __setattr__ runs
    return made


def _opaque(rest: list[Any], namespace: dict[str, Any] | None, depth: int) -> Opaque:
    return Opaque(_text(rest[0]), _text(rest[1])[: _MAX_REPR + 1])


_DECODERS: dict[str, Any] = {
    "N": lambda rest, namespace, depth: None,
    "B": lambda rest, namespace, depth: _flag(rest[0]),
    "S": lambda rest, namespace, depth: _text(rest[0]),
    "I": _atom(int), "F": _atom(float), "C": _atom(complex),
    "Y": _bytes(bytes), "YA": _bytes(bytearray),
    "L": _sequence(list), "T": _sequence(tuple), "E": _sequence(set), "FE": _sequence(frozenset),
    "D": _mapping, "X": _exception, "K": _known, "EN": _member, "NT": _named_tuple, "A": _instance, "O": _opaque,
}  # fmt: skip

"""Values as tagged plain data, so that a verdict can be reached where the candidate cannot reach.

A candidate's results are recorded in the sandbox as plain data (:func:`encode`) and read back in
the trusted host (:func:`decode`). The record came from a process that ran untrusted code, so the
host reads it as data, never as instructions to build objects (docs/trust.md, "What comes back from
the sandbox"): plain types from bounded text (at most :data:`MAX_DIGITS` digits, :data:`MAX_DEPTH`
deep, :data:`MAX_NODES` values, :data:`MAX_KEYS` hashed keys); instances rebuilt only for plain
classes of the user's own code, with no code of the class run; any other instance a
:class:`DataValue` compared by its encoding; an exception rebuilt only for a built-in or the user's
own ``Exception``, any other (``SystemExit`` among them) a :class:`RaisedElsewhere` stand-in. A
stand-in makes the read *inexact*: a check that fails on it is unjudged (see :mod:`regrow._checks._transcript`).
"""

from __future__ import annotations

import base64
import builtins
import dataclasses
import datetime
import decimal
import enum
import fractions
import functools
import re
import sys
import types
import uuid
from typing import Any, TypeVar

from ._frames import users_file
from ._plain_encode import (
    DATE_TYPES,
    KNOWN_TYPES,
    MAX_DEPTH,
    MAX_REPR,
    Opaque,
    PlainError,
    digest,
    encode,
    own_new,
    type_name,
)  # fmt: skip

__all__ = ["DataValue", "Decoded", "Opaque", "PlainError", "RaisedElsewhere", "decode", "digest", "encode",
           "read", "type_name"]

MAX_DIGITS = 4300  # digits of an int, a Decimal's coefficient or a Fraction's terms; a Decimal's exponent
MAX_NODES = 200_000  # values in one decoded record (the encoder's own bound is 50,000 containers)
MAX_KEYS = 10_000  # set items and dict keys in one record: colliding hashes make each insert linear
_INT = re.compile(rf"[-+]?[0-9]{{1,{MAX_DIGITS}}}")
_FLOAT = re.compile(r"[-+]?(?:[0-9]{1,400}(?:\.[0-9]{0,400})?(?:e[-+]?[0-9]{1,4})?|inf|nan)", re.IGNORECASE)
_COMPLEX = re.compile(r"\(?[-+0-9.einfaj ]{1,900}\)?", re.IGNORECASE)
_DECIMAL = re.compile(rf"[-+]?(?:[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{0,{MAX_DIGITS}}})?(?:E[-+]?[0-9]{{1,4}})?"
                      r"|Infinity|NaN|sNaN)", re.IGNORECASE)
_FRACTION = re.compile(rf"[-+]?[0-9]{{1,{MAX_DIGITS}}}(?:/[0-9]{{1,{MAX_DIGITS}}})?")
_ISO = re.compile(r"[0-9T:.+ -]{1,64}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_T = TypeVar("_T")
_EXCEPTION_GROUP: type | None = getattr(builtins, "BaseExceptionGroup", None)


class _TooLarge(Exception):
    """The record is larger than the host compares (it is read as opaque)."""


class DataValue:
    """An instance of a class the host does not rebuild, as data: its type's name and its fields.

    It equals another :class:`DataValue` with the same encoding, and a host object whose encoding
    (type name and fields, :func:`encode`) is the same; its fields read as attributes. No code of the
    class it stands for runs.
    """

    __slots__ = ("_fields", "_node", "type_name")

    def __init__(self, type_name: str, fields: dict[str, Any], node: list[Any]) -> None:
        self.type_name, self._fields, self._node = type_name, fields, node

    def __eq__(self, other: object) -> bool:
        if type(other) is DataValue:
            return self._node == other._node
        return self._node == encode(other)

    def __hash__(self) -> int:
        return hash(digest(self._node))

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if name.startswith("__") or name not in fields:
            raise AttributeError(name)
        return fields[name]

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self._fields.items())
        return f"<{self.type_name} as data: {shown[:MAX_REPR]}>"


class RaisedElsewhere(Exception):
    """An exception the host does not rebuild (see the module's docs): it names the type it stands for."""

    def __init__(self, name: str, args: tuple[Any, ...]) -> None:
        super().__init__(f"{name}{args!r}")
        self.type_name = name


@dataclasses.dataclass(frozen=True, slots=True)
class Decoded:
    """A value read from a record; ``exact``: it is what the candidate produced, not a stand-in for it."""

    value: Any
    exact: bool


def decode(node: Any, namespace: dict[str, Any] | None = None) -> Any:
    """The value ``node`` encodes (see the module's docs); :class:`PlainError` if malformed."""
    return read(node, namespace).value


def read(node: Any, namespace: dict[str, Any] | None = None) -> Decoded:
    """The value ``node`` encodes and whether it is exact; :class:`PlainError` if malformed.

    ``namespace`` (the target's module globals) is where classes are looked up first; they are also
    found by module and qualname among modules already imported, never by importing.
    """
    reader = _Reader(namespace)
    try:
        value = reader(node, 0)
    except _TooLarge as exc:
        return Decoded(Opaque("record", str(exc)), False)
    except RecursionError:
        raise PlainError("nested too deeply") from None
    return Decoded(value, not reader.inexact)


class _Reader:
    """One record's reading: counts what it has read against the bounds, notes stand-ins."""

    def __init__(self, namespace: dict[str, Any] | None) -> None:
        self.namespace, self.nodes, self.keys, self.inexact = namespace, 0, 0, False

    def __call__(self, node: Any, depth: int) -> Any:
        if type(node) is not list or not node or type(node[0]) is not str or depth > MAX_DEPTH + 2:
            raise PlainError("not an encoded value")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge(f"<more than {MAX_NODES} values: too large to compare>")
        tag, rest = node[0], node[1:]
        reader = _READERS.get(tag)
        if reader is None:
            raise PlainError(f"unknown tag {tag[:20]!r}")
        try:
            return reader(self, rest, depth + 1, node)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, ArithmeticError) as exc:
            if isinstance(exc, PlainError):
                raise
            raise PlainError(f"malformed {tag!r} value: {type(exc).__name__}") from None

    def hashed(self, count: int) -> None:
        self.keys += count
        if self.keys > MAX_KEYS:
            raise _TooLarge(f"<more than {MAX_KEYS} set items or dict keys: too large to compare>")

    def stand_in(self, value: _T) -> _T:
        self.inexact = True
        return value


def _text(item: Any, pattern: re.Pattern[str] | None = None) -> str:
    if type(item) is not str:
        raise PlainError("expected a string")
    if pattern is not None and not pattern.fullmatch(item):
        raise PlainError(f"not a number or value of the expected form: {item[:40]!r}")
    return item


def _items(item: Any) -> list[Any]:
    if type(item) is not list:
        raise PlainError("expected a list")
    return item


def _flag(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> bool:
    if type(rest[0]) is not bool:
        raise PlainError("expected a boolean")
    return bool(rest[0])


def _decimal(text: str) -> decimal.Decimal:
    value = decimal.Decimal(_text(text, _DECIMAL))
    if value.is_finite() and abs(value.adjusted()) > MAX_DIGITS:
        raise PlainError("a Decimal's exponent out of bounds")
    return value


_NUMBERS: dict[str, Any] = {
    "I": lambda text: int(_text(text, _INT)),
    "F": lambda text: float(_text(text, _FLOAT)),
    "C": lambda text: complex(_text(text, _COMPLEX)),
    "decimal.Decimal": _decimal,
    "fractions.Fraction": lambda text: fractions.Fraction(_text(text, _FRACTION)),
    "uuid.UUID": lambda text: uuid.UUID(_text(text, _UUID)),
    "datetime.timedelta": lambda text: datetime.timedelta(seconds=float(_text(text, _FLOAT))),
    **{name: functools.partial(lambda kind, text: kind.fromisoformat(_text(text, _ISO)), kind)
       for name, kind in DATE_TYPES.items()},
}  # fmt: skip
assert set(KNOWN_TYPES) <= set(_NUMBERS)


def _atom(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    return _NUMBERS[node[0]](rest[0])


def _known(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    make = _NUMBERS.get(_text(rest[0]))
    if make is None or rest[0] in ("I", "F", "C"):
        raise PlainError(f"unknown type {rest[0][:80]!r}")
    return make(rest[1])


def _sequence(kind: type) -> Any:
    def read(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
        items = _items(rest[0])
        if kind is set or kind is frozenset:
            reader.hashed(len(items))
        return kind(reader(item, depth) for item in items)

    return read


def _mapping(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    pairs = _items(rest[0])
    reader.hashed(len(pairs))
    made = {}
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            raise PlainError("a malformed dict item")
        made[reader(pair[0], depth)] = reader(pair[1], depth)
    return made


def _bytes(kind: type) -> Any:
    def read(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
        return kind(base64.b64decode(_text(rest[0]), validate=True))

    return read


def _opaque(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Opaque:
    return reader.stand_in(Opaque(_text(rest[0])[:MAX_REPR], _text(rest[1])[: MAX_REPR + 1]))


# -- classes: found, never imported; rebuilt only when they are the user's own --------------------------------


def find_class(name: str, namespace: dict[str, Any] | None) -> type | None:
    """The class ``module.qualname`` among loaded modules (no import), or ``None``."""
    if "." not in name:
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
    for part in qualname.split("."):  # looked up in namespaces, no module __getattr__ or descriptor runs
        if isinstance(holder, types.ModuleType):
            holder = vars(holder).get(part)
        else:
            holder = _class_attribute(holder, part) if isinstance(holder, type) else None
    return holder if isinstance(holder, type) else None


def users_own(kind: type) -> bool:
    """Whether ``kind`` is defined by the user's code: a module with a file, not the standard library, not an
    installed package, not regrow itself (their classes may act on their fields, e.g. in ``__del__``)."""
    module = sys.modules.get(kind.__module__)
    file = getattr(module, "__file__", None) if module is not None else None
    top = kind.__module__.partition(".")[0]
    return type(file) is str and top not in sys.stdlib_module_names and top != "regrow" and users_file(file)


def _defines(kind: type, name: str) -> bool:
    """Whether ``kind`` or a base other than ``object`` defines ``name``."""
    return any(name in vars(klass) for klass in kind.__mro__ if klass is not object)


def _exception(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> BaseException:
    name = _text(rest[0])
    args = tuple(reader(arg, depth) for arg in _items(rest[1]))
    kind = find_class(name, reader.namespace)
    if kind is None or not issubclass(kind, BaseException):
        return RaisedElsewhere(name[:MAX_REPR], args)  # made by the candidate, or not loaded here
    builtin = kind.__module__ == "builtins" and (_EXCEPTION_GROUP is None or not issubclass(kind, _EXCEPTION_GROUP))
    if issubclass(kind, Exception) and (builtin or (users_own(kind) and not _defines(kind, "__del__"))):
        exc = kind.__new__(kind)  # no __init__: the host runs none of the exception's code
        exc.args = args
        return exc
    return reader.stand_in(_stand_in_class(kind)(name, args))


def _stand_in_class(kind: type) -> type[RaisedElsewhere]:
    """A :class:`RaisedElsewhere` that is also the nearest built-in ``Exception`` ``kind`` derives from."""
    base = next((klass for klass in kind.__mro__ if klass.__module__ == "builtins" and issubclass(klass, Exception)
                 and klass in _CONSTRUCTIBLE), Exception)
    return _STAND_INS.get(base, RaisedElsewhere)


# Built-in exceptions a stand-in may derive from: made with one message (no OSError: its __new__ picks a subclass).
_CONSTRUCTIBLE = (ArithmeticError, AssertionError, AttributeError, EOFError, ImportError, LookupError, IndexError,
                  KeyError, NameError, NotImplementedError, RecursionError, RuntimeError, StopAsyncIteration,
                  TypeError, ValueError, ZeroDivisionError, OverflowError, UnicodeError, BufferError, MemoryError)
_STAND_INS: dict[type, type[RaisedElsewhere]] = {
    base: type(f"RaisedElsewhere{base.__name__}", (RaisedElsewhere, base), {"__module__": __name__})
    for base in _CONSTRUCTIBLE
}


def _member(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    kind = find_class(_text(rest[0]), reader.namespace)
    member = kind.__members__.get(_text(rest[1])) if kind is not None and issubclass(kind, enum.Enum) else None
    if member is None:
        return reader.stand_in(Opaque(rest[0][:MAX_REPR], rest[1][:MAX_REPR]))
    return member


def _named_tuple(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    name = _text(rest[0])
    kind = find_class(name, reader.namespace)
    items = [reader(item, depth) for item in _items(rest[1])]
    fields = _class_attribute(kind, "_fields") if kind is not None and issubclass(kind, tuple) else None
    if kind is None or type(fields) is not tuple or len(fields) != len(items) or _defines(kind, "__del__"):
        return _as_data(reader, name, kind, {f"_{index}": item for index, item in enumerate(items)}, node)
    return tuple.__new__(kind, items)  # what a named tuple's _make does, without a subclass's code


def _instance(reader: _Reader, rest: list[Any], depth: int, node: list[Any]) -> Any:
    name = _text(rest[0])
    state: dict[str, Any] = {}
    for pair in _items(rest[1]):
        if type(pair) is not list or len(pair) != 2:
            raise PlainError("a malformed field")
        state[_text(pair[0])[:MAX_REPR]] = reader(pair[1], depth)
    kind = find_class(name, reader.namespace)
    if kind is None or not _rebuildable(kind, state):
        return _as_data(reader, name, kind, state, node)
    made: Any = object.__new__(kind)
    attributes = object.__getattribute__(made, "__dict__") if _has_dict(kind) else None
    for key, value in state.items():
        if isinstance(_class_attribute(kind, key), types.MemberDescriptorType):
            object.__setattr__(made, key, value)  # a slot: the interpreter's own store
        else:
            attributes[key] = value  # type: ignore[index]  # _rebuildable: the instance has a __dict__
    return made


def _rebuildable(kind: type, state: dict[str, Any]) -> bool:
    """Whether an instance of ``kind`` with fields ``state`` can be made without running the class's code."""
    if not users_own(kind) or own_new(kind) or _defines(kind, "__del__"):
        return False
    has_dict = _has_dict(kind)
    for key in state:
        if not key.isidentifier() or key.startswith("__"):
            return False
        found = _class_attribute(kind, key)
        if isinstance(found, types.MemberDescriptorType):
            continue
        if hasattr(type(found), "__set__") or hasattr(type(found), "__delete__") or not has_dict:
            return False  # a property or another descriptor would run the class's code
    return True


def _has_dict(kind: type) -> bool:
    return any("__dict__" in vars(klass) for klass in kind.__mro__ if klass is not object)


def _class_attribute(kind: type, name: str) -> Any:
    return next((vars(klass)[name] for klass in kind.__mro__ if name in vars(klass)), None)


def _as_data(reader: _Reader, name: str, kind: type | None, fields: dict[str, Any], node: list[Any]) -> DataValue:
    value = DataValue(name[:MAX_REPR], fields, node)
    return reader.stand_in(value) if kind is not None else value


_READERS: dict[str, Any] = {
    "N": lambda reader, rest, depth, node: None,
    "B": _flag,
    "S": lambda reader, rest, depth, node: _text(rest[0]),
    "I": _atom, "F": _atom, "C": _atom,
    "Y": _bytes(bytes), "YA": _bytes(bytearray),
    "L": _sequence(list), "T": _sequence(tuple), "E": _sequence(set), "FE": _sequence(frozenset),
    "D": _mapping, "X": _exception, "K": _known, "EN": _member, "NT": _named_tuple, "A": _instance, "O": _opaque,
}  # fmt: skip

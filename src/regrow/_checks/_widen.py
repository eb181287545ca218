"""More inputs for judging a fix against a reference: what :func:`._inputs.widen` makes beyond one
argument's plain variations.

- **Values it has no rule for**: dates and times (a day, a month, a year on; the start of a month),
  durations and exact numbers (``Decimal``, ``Fraction``: doubled, negated, landmarks), and objects
  whose fields are numbers (a dataclass through ``dataclasses.replace``, another object copied and
  its attribute set): each such field at the magnitudes a bug hides behind (0, ±2, 10, 100, doubled,
  negated).
- **Other arguments' values**: two arguments of one type swapped, or one given the other's value.
- **Pairs**: two arguments changed at once (the first few variations of each).
- **The function's own texts** (:func:`constant_texts`, used by the engine's guard too): its short
  string constants put into a string argument at its first places and at its end.

Functions of plain values only (the calls themselves are :mod:`._inputs`'), run in a worker.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime
import decimal
import fractions
import itertools
import math
import re
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, AnyStr

_MAGNITUDES = (0, 2, -2, 10, 100)
_DIGITS = re.compile(r"\d+")
_FIELDS = 4  # fields of one object varied, at most
_PAIRED = 3  # variations of each argument of a pair
_TEXTS = 4  # the function's own short string constants put into string arguments (see constant_texts) ...
_PLACES = 3  # ... at the first places of the string (and at its end)


def _numbers(value: Any) -> Iterator[Any]:
    """A number (int, float, Decimal, Fraction) at other magnitudes, keeping its type."""
    kind = type(value)
    yield from (kind(n) for n in _MAGNITUDES)
    yield from (value * 2, -value, value + 1, value - 1)


def more_variants(value: Any) -> Iterator[Any]:
    """Variations of a value that the plain rules do not vary (see the module's docstring)."""
    if isinstance(value, (decimal.Decimal, fractions.Fraction)):
        if not isinstance(value, decimal.Decimal) or value.is_finite():
            yield from _numbers(value)
    elif isinstance(value, datetime.timedelta):
        yield from (value * 2, -value, value * 10, datetime.timedelta(0), datetime.timedelta(days=1),
                    datetime.timedelta(days=2), datetime.timedelta(hours=-2))
    elif isinstance(value, datetime.date):  # datetime too: a subclass
        for days in (1, -1, 2, 31, 366, -366):
            try:
                yield value + datetime.timedelta(days=days)
            except OverflowError:
                continue
        for change in ({"day": 1}, {"month": 12, "day": 31}, {"month": 2, "day": 28}, {"year": 2000}):
            try:
                yield value.replace(**change)
            except ValueError:
                continue
    else:
        yield from fields_varied(value, _numbers)


def fields_varied(value: Any, numbers: Callable[[Any], Iterator[Any]], slots: bool = False) -> Iterator[Any]:
    """Copies of an object (a dataclass, or an instance of a user's class: one with a ``__dict__``, or, if
    ``slots``, one with only ``__slots__``; its fields those of both) with one of its first number fields set
    to each of ``numbers(field)``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        numeric = [field.name for field in dataclasses.fields(value) if field.init
                   and type(getattr(value, field.name, None)) in (int, float)][:_FIELDS]
        for name in numeric:
            for number in numbers(getattr(value, name)):
                try:
                    yield dataclasses.replace(value, **{name: number})
                except Exception:
                    break
    elif _plain_object(value, slots):
        numeric = [name for name in _fields(value) if type(getattr(value, name, None)) in (int, float)][:_FIELDS]
        for name in numeric:
            for number in numbers(getattr(value, name)):
                try:
                    other = copy.copy(value)
                    setattr(other, name, number)
                except Exception:
                    break
                yield other


def _fields(value: Any) -> list[str]:
    """The attribute names of an instance: those in its ``__dict__``, then its classes' ``__slots__``."""
    names = list(getattr(value, "__dict__", {}))
    for kind in type(value).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [name for name in slots if isinstance(name, str)]
    return [name for name in dict.fromkeys(names) if name not in ("__dict__", "__weakref__")]


def _plain_object(value: Any, slots: bool = False) -> bool:
    """An instance of a user's class with attributes in ``__dict__`` (or in ``__slots__``, if ``slots``; not a
    class, function or module)."""
    slotted = slots and any("__slots__" in kind.__dict__ for kind in type(value).__mro__[:-1])
    return ((hasattr(value, "__dict__") or slotted)
            and not isinstance(value, type) and not callable(value)
            and type(value).__module__ not in ("builtins", "types"))


def crossed(args: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """The positional arguments with two of one type swapped, or one given the other's value."""
    for i, j in itertools.permutations(range(len(args)), 2):
        if type(args[i]) is type(args[j]):
            if i < j:
                swapped = list(args)
                swapped[i], swapped[j] = args[j], args[i]
                yield tuple(swapped)
            yield (*args[:i], args[j], *args[i + 1:])


def paired(args: tuple[Any, ...], variants: Callable[[Any], Iterator[Any]]) -> Iterator[tuple[Any, ...]]:
    """The positional arguments with two changed at once: the first few ``variants`` of each."""
    for i, j in itertools.combinations(range(len(args)), 2):
        firsts = [list(itertools.islice(variants(args[at]), _PAIRED)) for at in (i, j)]
        for left, right in itertools.product(*firsts):
            changed = list(args)
            changed[i], changed[j] = left, right
            yield tuple(changed)


def streams(args: tuple[Any, ...], variants: Callable[[Any], Iterator[Any]]) -> Sequence[Iterator[tuple[Any, ...]]]:
    """The crossed and the paired arguments of one call, as two streams."""
    return [crossed(args), paired(args, variants)]


def constant_texts(code: types.CodeType) -> tuple[str, ...]:
    """The short string constants of ``code`` and its nested code that are not names (``"--"``, ``"@"``,
    ``", "``), at most ``_TEXTS``. A function that looks for them in a string shows what it does with them
    only on strings that hold them where it looks, which the tests' own strings rarely all do: a slice
    compared with ``"--"`` at the wrong place passes tests that never put ``"--"`` at the right one."""
    found: list[str] = []
    stack = [code]
    while stack:
        for const in stack.pop(0).co_consts:
            if isinstance(const, types.CodeType):
                stack.append(const)
            elif type(const) is str and 0 < len(const) <= 4 and not const.isidentifier() and const.strip():
                found.append(const)
    return tuple(dict.fromkeys(found))[:_TEXTS]


def inserted(value: Any, texts: Sequence[str]) -> Iterator[Any]:
    """``value`` (a string) with each of ``texts`` put in at its first places and at its end."""
    if type(value) is str:
        for text in texts:
            for at in dict.fromkeys((*range(min(len(value), _PLACES) + 1), len(value))):
                yield value[:at] + text + value[at:]


def plain_variants(value: Any) -> Iterator[Any]:
    """Small changes of a plain value, keeping its type."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int):
        yield value + 1
        yield value - 1
    elif isinstance(value, float) and math.isfinite(value):
        yield value + 1.0
        yield value - 1.0
    elif isinstance(value, str) and value:
        yield value[1:]
        yield value[:-1]
        if value.strip() != value:
            yield value.strip()
    elif isinstance(value, (list, tuple)) and value:
        yield value[:-1]
        yield value[1:]
        if len(value) > 1:
            yield value[::-1]
    elif isinstance(value, dict) and value:
        yield dict(list(value.items())[:-1])


# Wider inputs, for judging a fix against a reference (the benchmark): a wrong fix the tests let through must show.

_NUMBERS = (0, 1, 2, 3, -1, -2, 7, 10, 100)
_ELEMENT_VARIANTS = 3  # changes of the first and of the last element of a container


def wide_variants(value: Any) -> Iterator[Any]:
    """:func:`plain_variants` and more, keeping the type: landmark numbers, ±2, doubled, halved and negated
    ones; empty, singleton, longer (with duplicates), reversed, sorted containers; empty,
    one-character, doubled, upper and lower case strings and strings with spaces."""
    yield from plain_variants(value)  # objects: by more_variants below, as the judge always varied them
    if isinstance(value, bool):
        return
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        yield from (type(value)(n) for n in _NUMBERS)
        yield from (value + 2, value - 2, value * 2, -value)
        yield value // 2 if type(value) is int else value / 2
        if type(value) is float:
            yield 0.5
    elif isinstance(value, str):
        yield from _texts_of(value, " ")
    elif isinstance(value, bytes):
        yield from _texts_of(value, b" ")
    elif type(value) in (list, tuple):
        kind = type(value)
        yield kind()
        if value:
            yield from (value[:1], value + value, value[::-1])
            with contextlib.suppress(Exception):
                yield kind(sorted(value))
            for at in dict.fromkeys((0, len(value) - 1)):
                for element in itertools.islice(wide_variants(value[at]), _ELEMENT_VARIANTS):
                    yield kind([*value[:at], element, *value[at + 1 :]])
    elif type(value) in (set, frozenset):
        yield type(value)()
        with contextlib.suppress(Exception):
            yield type(value)(sorted(value)[:1])
    elif type(value) is dict:
        yield {}
        items = list(value.items())
        if items:
            yield dict(items[:1])
            yield dict(reversed(items))
            with contextlib.suppress(Exception):
                yield dict(sorted(items))
            key, first = items[0]
            for element in itertools.islice(wide_variants(first), _ELEMENT_VARIANTS):
                yield {**value, key: element}
    else:  # dates, durations, exact numbers, objects with number fields (see _widen)
        yield from more_variants(value)


def _texts_of(value: AnyStr, space: AnyStr) -> Iterator[AnyStr]:
    yield from (value[:0], value[:1], value * 2, value.upper(), value.lower(), space + value + space)
    if len(value) > 1:
        yield value[: len(value) // 2] + space + value[len(value) // 2 :]
    if isinstance(value, str):  # a number written in the text, another size: ``"$3.01"`` → ``"$3.99"``
        for match in itertools.islice(_DIGITS.finditer(value), _PLACES):
            for run in ("9" * max(len(match.group()), 2), "0"):
                if run != match.group():
                    yield value[: match.start()] + run + value[match.end() :]

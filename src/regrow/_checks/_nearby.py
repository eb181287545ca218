"""Inputs near a failing call: the differential set a fix is compared with the original on.

The failing call is often degenerate — an empty list, ``None``, ``0``, a missing key — and the
original raises on everything of exactly its shape. So besides the same-type variations (numbers at
zero, with the other sign, at other magnitudes; containers emptied, shortened, lengthened, reversed;
strings cut, doubled, case-changed, made of digits) each parameter also gets:

- *probes* of other shapes, built from what the function itself uses: its string constants as dict
  keys (``{"total": 1}``, nested one level), lists of such dicts, numeric and date-like strings;
- values taken from the other arguments: a dict argument's keys for a string parameter, a list
  argument's elements (and the list with another argument appended);
- the parameters the call left at their defaults, varied too;
- and pairs: two parameters changed at once, where one at a time cannot reach a returning call.

Deterministic: the same call gives the same inputs, in the same order.
"""

from __future__ import annotations

import inspect
import itertools
import math
import types
from collections.abc import Iterator, Mapping
from typing import Any

from ._inputs import Call

CallArgs = tuple[tuple[Any, ...], Mapping[str, Any]]
_NUMBERS = (0, 1, -1, 2, -2, 3, 7, 10, -10, 100)
_STRINGS = ("", "a", "b", "0", "1", "7", "-3", "42", "12.5", "abc", " Foo ", "Hello World", "2024-01-31", "1999-12-31",
            "v1.2")
_LISTS: tuple[list[Any], ...] = (
    [1], [2, 4], [1, 2, 3], [-3, 7, 0], [5, 5], [1, 2, 3, 4, 5], [3, 1, 4, 1, 5, 9, 2], [2, 7, 1, 8, 2, 8],
    [1, 3, 1, 3, 1], [0, 5, 2, 6, 1, 4, 0], ["a"], ["a", "b"], ["b", "a", "c"],
)  # fmt: skip
_MAX_KEYS = 6


def _numbers(value: float) -> Iterator[Any]:
    kind = type(value)
    for number in (*_NUMBERS, value * 2, -value, value + 1, value - 1):
        yield kind(number)


def same_kind(value: Any) -> Iterator[Any]:
    """Values of the same type as ``value``."""
    kind = type(value)
    if kind is bool:
        yield not value
    elif kind is int or (kind is float and math.isfinite(value)):
        yield from _numbers(value)
    elif kind is str:
        yield from (value[1:], value[:-1], value * 2, value.upper(), value.lower(), value.strip(), f" {value} ",
                    *_STRINGS)
    elif kind is list or kind is tuple:
        items = list(value)
        made = [items[:-1], items[1:], items[::-1], items + items[-1:], items + items, items[:1], [], *_LISTS] \
            if items else list(_LISTS)
        yield from (kind(each) for each in made)
    elif kind is dict:
        pairs = list(value.items())
        if pairs:
            yield from (dict(pairs[:-1]), dict(pairs[1:]), {})
            yield {key: (item * 2 if type(item) in (int, float) else item) for key, item in pairs}


def _constants(func: types.FunctionType) -> list[str]:
    """The function's short string constants that read like keys, in order of appearance."""
    found: list[str] = []
    stack = [func.__code__]
    while stack:
        code = stack.pop(0)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                stack.append(const)
            elif type(const) is str and const.isidentifier() and len(const) <= 30 and const not in found:
                found.append(const)
    return found[:_MAX_KEYS]


def _probes(func: types.FunctionType) -> list[Any]:
    """Values of other shapes, built from the function's own string constants."""
    keys = _constants(func)
    flat = [{key: 1} for key in keys] + ([{key: "x" for key in keys}] if keys else [])
    nested = [{outer: {inner: text for inner in keys}} for outer in keys for text in ("x", "Hello World")]
    records = [[{key: n for key in keys} for n in numbers] for numbers in ((1,), (2, 3), (0, -1, 5))] if keys else []
    return [*_STRINGS[1:], 0, 1, 2.5, [], ["a", "b"], [1, 2], *flat, *nested, *records, None]


def _merged(value: Any, func: types.FunctionType, others: list[Any]) -> Iterator[Any]:
    """A dict argument with keys added: the function's constants, and the other arguments' strings."""
    if type(value) is not dict or not value:
        return
    sample = next(iter(value.values()))
    keys = [*_constants(func), *(other for other in others if type(other) is str and other)]
    for key in keys:
        if key not in value:
            yield {**value, key: sample}
            yield from ({**value, key: {inner: text for inner in _constants(func)}} for text in ("x", "Hello World"))


def _from_others(index: int, values: list[Any]) -> Iterator[Any]:
    """Values for parameter ``index`` taken from the other arguments."""
    mine = values[index]
    for j, other in enumerate(values):
        if j == index:
            continue
        if type(other) is dict and (mine is None or type(mine) is str):
            yield from itertools.islice((key for key in other if type(key) is str), _MAX_KEYS)
        elif type(other) in (list, tuple, set, frozenset) and not isinstance(mine, (list, dict)):
            yield from itertools.islice(other, _MAX_KEYS)
        if type(mine) is list and other is not None and not isinstance(other, (list, dict)):
            yield [*mine, other]


def _bound(func: types.FunctionType, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[tuple[str, Any, bool]]:
    """``(name, value, positional)`` for every parameter of the call, defaults included."""
    signature = inspect.signature(func)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    out = []
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError("*args and **kwargs are varied as given")
        out.append((name, value, kind is not inspect.Parameter.KEYWORD_ONLY and name not in kwargs))
    return out


def _calls_for(params: list[tuple[str, Any, bool]], changes: dict[int, Any]) -> Call:
    args = [changes.get(i, value) for i, (_, value, positional) in enumerate(params) if positional]
    kwargs = {name: changes.get(i, value) for i, (name, value, positional) in enumerate(params) if not positional}
    return Call(tuple(args), kwargs)


def nearby(func: types.FunctionType, args: tuple[Any, ...], kwargs: Mapping[str, Any],
           limit: int = 96) -> list[CallArgs]:
    """Calls near ``func(*args, **kwargs)`` (see the module docstring); never the call itself."""
    try:
        params = _bound(func, args, kwargs)
    except (TypeError, ValueError):  # *args, **kwargs or a call that does not bind: vary the arguments as given
        params = [(str(i), value, True) for i, value in enumerate(args)]
        params += [(name, value, False) for name, value in kwargs.items()]
    probes = _probes(func)
    values = [value for _, value, _ in params]
    options: list[list[Any]] = []
    for i, value in enumerate(values):
        others = values[:i] + values[i + 1 :]
        # What the other arguments suggest first: those are the values most likely to make a call return.
        options.append([*_from_others(i, values), *_merged(value, func, others), *same_kind(value), *probes])
    given = Call(tuple(args), dict(kwargs)).key()
    seen = {given}
    made: list[CallArgs] = []

    def add(call: Call) -> None:
        key = call.key()
        if key not in seen and len(made) < limit:
            seen.add(key)
            made.append((call.args, call.kwargs))

    single = limit * 3 // 4  # the rest is for pairs
    for round_ in range(max((len(o) for o in options), default=0)):  # round-robin: every parameter gets its turn
        for i, choices in enumerate(options):
            if round_ < len(choices) and len(made) < single:
                add(_calls_for(params, {i: choices[round_]}))
    for i, j in itertools.combinations(range(len(params)), 2):
        for a, b in itertools.product(options[i][:4], options[j][:4]):
            add(_calls_for(params, {i: a, j: b}))
    return made

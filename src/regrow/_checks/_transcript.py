"""A verdict the candidate cannot reach: record its results in the sandbox, judge them in the host.

In the sandbox each check that takes the function as an argument (the replay, ``verify=``, the
``tests=`` callables, recorded calls, the differential guard) gets a :class:`Recorder` instead:
every call it makes is written down as plain data — the arguments' digest, what came back or was
raised, the arguments after the call when it changed them. In the host the same checks run again,
on the host's own objects, against a :class:`Replayer` that answers each call from that record.

So the user's assertions, ``verify=`` and the comparisons run in a process the candidate never
touched, on values rebuilt from the host's own types. Patching ``AssertionError``, clearing the
list of checks, returning an object whose ``__eq__`` is always true, exiting with status 0 or
writing a forged "passed" frame — each of these changes what the sandbox says, not what the host
concludes. What a record cannot settle (a value with no plain form, a test that calls the function
by name, a call the host makes differently) is *unjudged*; the session decides what that means.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .._plain import PlainError, digest, encode, read

MAX_TRANSCRIPT = 8 << 20  # characters of encoded results one evaluation may send back


class Unjudged(BaseException):
    """The record cannot answer this call; a ``BaseException``, so no test's ``except`` swallows it."""


def call_digest(args: Sequence[Any], kwargs: dict[str, Any]) -> str:
    return digest(encode([list(args), dict(kwargs)]))


class Recorder:
    """Stands in for the candidate inside a check (in the sandbox) and writes down every call."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.calls: list[list[Any]] = []
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        """The function's name: an assertion's explanation reads ``where 7 = median([1, 2])``, not the address of
        an object of regrow's that means nothing to the user or a model, and differs every run."""
        return str(getattr(self.fn, "__name__", None) or repr(self.fn))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        before = encode([list(args), kwargs])
        try:
            value = self.fn(*args, **kwargs)
        except BaseException as exc:
            self._note(before, "x", exc, args, kwargs)
            raise
        if inspect.iscoroutine(value):
            return self._awaited(before, value, args, kwargs)
        if inspect.isgenerator(value):
            return self._items(before, value)
        if inspect.isasyncgen(value):
            return self._async_items(before, value)
        self._note(before, "r", value, args, kwargs)
        return value

    def _items(self, before: list[Any], items: Any) -> Any:
        """A generator's items as the check takes them: ``[digest, "g", [items], end]`` (end: how it ended)."""
        record: list[Any] = [digest(before), "g", [], None]
        self.calls.append(record)
        while True:
            try:
                item = next(items)
            except StopIteration as stop:
                record[3] = ["r", encode(stop.value)]
                return stop.value
            except BaseException as exc:
                record[3] = ["x", encode(exc)]
                raise
            record[2].append(encode(item))
            yield item

    async def _async_items(self, before: list[Any], items: Any) -> Any:
        record: list[Any] = [digest(before), "g", [], None]
        self.calls.append(record)
        while True:
            try:
                item = await items.__anext__()
            except StopAsyncIteration:
                record[3] = ["r", encode(None)]
                return
            except BaseException as exc:
                record[3] = ["x", encode(exc)]
                raise
            record[2].append(encode(item))
            yield item

    async def _awaited(self, before: list[Any], coroutine: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            value = await coroutine
        except BaseException as exc:
            self._note(before, "x", exc, args, kwargs)
            raise
        self._note(before, "r", value, args, kwargs)
        return value

    def _note(self, before: list[Any], kind: str, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        after = encode([list(args), kwargs])
        self.calls.append([digest(before), kind, encode(value), None if after == before else after])


class Replayer:
    """Stands in for the candidate inside a check (in the host), answering each call from the record."""

    def __init__(self, calls: Sequence[Any], namespace: dict[str, Any], is_async: bool) -> None:
        self.calls, self.namespace, self.is_async = list(calls), namespace, is_async
        self.index = 0
        self.opaque = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.index >= len(self.calls):
            raise Unjudged("the check called the function more often than it did in the sandbox")
        record = self.calls[self.index]
        self.index += 1
        if type(record) is not list or len(record) != 4 or record[1] not in ("r", "x", "g"):
            raise PlainError("a malformed call record")
        before, kind, value, after = record
        if call_digest(args, kwargs) != before:
            raise Unjudged("the check called the function with other arguments than it did in the sandbox")
        if kind == "g":
            if type(value) is not list:
                raise PlainError("a malformed generator record")
            items = [self.value_of(item) for item in value]
            return _replay_async(items, after, self) if self.is_async else _replay_items(items, after, self)
        if after is not None:
            restore(args, kwargs, self.value_of(after))
        result = self.value_of(value)
        if kind == "x":
            raise _raisable(result)
        if self.is_async:
            return _ready(result)
        return result

    def value_of(self, node: Any) -> Any:
        """A recorded value, read as data (:func:`regrow._plain.read`); a stand-in makes the replay inexact."""
        decoded = read(node, self.namespace)
        self.opaque = self.opaque or not decoded.exact
        return decoded.value


def _raisable(value: Any) -> Exception:
    """A recorded exception to raise in the host: always an ``Exception`` (the reader never rebuilds others)."""
    if not isinstance(value, Exception):
        raise PlainError("a raise record without an exception")
    return value


async def _ready(value: Any) -> Any:
    return value


def _ending(end: Any, replayer: Replayer) -> Any:
    """How a replayed generator ends: its return value, or the exception it raised."""
    if end is None:
        raise Unjudged("the check took more of the generator than it did in the sandbox")
    if type(end) is not list or len(end) != 2 or end[0] not in ("r", "x"):
        raise PlainError("a malformed generator ending")
    value = replayer.value_of(end[1])
    if end[0] == "x":
        raise _raisable(value)
    return value


def _replay_items(items: list[Any], end: Any, replayer: Replayer) -> Any:
    yield from items
    return _ending(end, replayer)


async def _replay_async(items: list[Any], end: Any, replayer: Replayer) -> Any:
    for item in items:
        yield item
    _ending(end, replayer)


def restore(args: Sequence[Any], kwargs: dict[str, Any], after: Any) -> None:
    """Make ``args``/``kwargs`` equal to ``after`` (``[args, kwargs]``) in place: lists, dicts, sets only.

    Raises :class:`Unjudged` for an argument that differs and cannot be changed in place.
    """
    if type(after) is not list or len(after) != 2 or type(after[0]) is not list or type(after[1]) is not dict \
            or len(after[0]) != len(args):
        raise PlainError("a malformed record of changed arguments")
    pairs = [*zip(args, after[0], strict=True), *((kwargs[k], v) for k, v in after[1].items() if k in kwargs)]
    for mine, theirs in pairs:
        if encode(mine) == encode(theirs):
            continue
        if (type(mine) is list and type(theirs) is list) or (type(mine) is bytearray and type(theirs) is bytearray):
            mine[:] = theirs
        elif (type(mine) is dict and type(theirs) is dict) or (type(mine) is set and type(theirs) is set):
            mine.clear()
            mine.update(theirs)
        else:
            raise Unjudged(f"the function changed an argument of type {type(mine).__name__} in a way the host "
                           "cannot repeat")

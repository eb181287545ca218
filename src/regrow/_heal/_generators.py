"""A generator that failed while its caller iterated: how the caller's iteration goes on after a fix.

The fixed generator is made again from the same arguments, and so is the one the caller was
iterating (from the code that ran before the fix). Where the fixed one's first items are the ones
the caller already has, the caller gets the rest of the fixed one; otherwise its sequence cannot be
continued, and the original exception is raised with a note (the next call runs the fix from the
start). Making them again does again whatever their first items did.
"""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any

from .._plain import encode
from ._ledger import note

_DIFFERENT = object()
_NOTE = ("regrow: a fix is installed, but its first items differ from the ones already delivered to this "
         "caller, so this iteration cannot go on; the next call runs the fix")


def remake(func: types.FunctionType, code: types.CodeType | None, args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
    """``func``'s generator made again with ``code`` (the code before the last fix; ``None``: as it is)."""
    fn = types.FunctionType(code or func.__code__, func.__globals__, func.__name__, func.__defaults__,
                            func.__closure__)
    fn.__kwdefaults__ = func.__kwdefaults__
    return fn(*args, **kwargs)


def resume(fresh: Iterator[Any], old: Iterator[Any], delivered: int, exc: BaseException) -> Generator[Any, Any, Any]:
    """The rest of ``fresh`` for a caller that already has ``delivered`` items of ``old``."""
    for _ in range(delivered):
        try:
            mine, theirs = next(fresh), next(old)
        except Exception:
            mine, theirs = _DIFFERENT, None
        if mine is _DIFFERENT or encode(mine) != encode(theirs):
            note(exc, _NOTE)
            raise exc.with_traceback(exc.__traceback__)
    return (yield from fresh)


async def aresume(fresh: AsyncIterator[Any], old: AsyncIterator[Any], delivered: int,
                  exc: BaseException) -> AsyncIterator[Any]:
    """:func:`resume` for an async generator."""
    for _ in range(delivered):
        try:
            mine, theirs = await fresh.__anext__(), await old.__anext__()
        except Exception:
            mine, theirs = _DIFFERENT, None
        if mine is _DIFFERENT or encode(mine) != encode(theirs):
            note(exc, _NOTE)
            raise exc.with_traceback(exc.__traceback__)
    async for item in fresh:
        yield item

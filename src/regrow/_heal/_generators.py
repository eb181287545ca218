"""A generator that failed while its caller iterated: how the caller's iteration goes on after a fix.

The fixed generator is made again from the same arguments, and so is the one the caller was
iterating (from the code that ran before the fix). Where the fixed one's first items are the ones
the caller already has, the caller gets the rest of the fixed one; otherwise its sequence cannot be
continued, and the original exception is raised with a note (the next call runs the fix from the
start). Making them again does again whatever their first items did.

The wrapper counts the items it passed on (:func:`resume`). An instrumented generator counts nothing
(its healthy iteration is its own code), so the one made again from the code before the fix is run
beside the fixed one until it fails as the caller's did (:func:`replay`): the items before are the ones
the caller has. Where it does not fail again within ``REPLAY_LIMIT`` items, the caller's iteration
cannot go on either.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any, NoReturn

from .._plain import encode
from ._ledger import note

_DIFFERENT = object()
_NOTE = ("regrow: a fix is installed, but its first items differ from the ones already delivered to this "
         "caller, so this iteration cannot go on; the next call runs the fix")
_UNTOLD = ("regrow: a fix is installed, but the code before it, made again, did not fail again within "
           "{limit} items, so the items already delivered to this caller cannot be told and this iteration "
           "cannot go on; the next call runs the fix")
REPLAY_LIMIT = 100_000


def remake(func: types.FunctionType, code: types.CodeType | None, args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
    """``func``'s generator made again with ``code`` (the code before the last fix; ``None``: as it is)."""
    fn = types.FunctionType(code or func.__code__, func.__globals__, func.__name__, func.__defaults__,
                            func.__closure__)
    fn.__kwdefaults__ = func.__kwdefaults__
    return fn(*args, **kwargs)


def rest(func: types.FunctionType, plain: types.CodeType | None, replaced: types.CodeType | None,
         args: tuple[Any, ...], kwargs: dict[str, Any], exc: BaseException) -> Any:
    """For an instrumented generator whose caller's iteration failed with ``exc`` and got a fix: the rest of the
    fixed generator made from its ``plain`` code (not hooked: its failures are the caller's, as through the
    wrapper), after the items the caller has, told by running the code the fix ``replaced`` again."""
    fresh, old = remake(func, plain, args, kwargs), remake(func, replaced, args, kwargs)
    return (areplay if func.__code__.co_flags & inspect.CO_ASYNC_GENERATOR else replay)(fresh, old, exc)


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


def replay(fresh: Iterator[Any], old: Iterator[Any], exc: BaseException,
           limit: int = REPLAY_LIMIT) -> Generator[Any, Any, Any]:
    """The rest of ``fresh`` for a caller whose iteration of ``old`` (made again) failed with ``exc``."""
    for _ in range(limit):
        try:
            theirs = next(old)
        except StopIteration:
            break
        except Exception:  # failed again where the caller's did: the items so far are the ones it has
            return (yield from fresh)
        try:
            mine = next(fresh)
        except Exception:
            mine = _DIFFERENT
        _agree(mine, theirs, exc)
    _untold(exc, limit)


async def areplay(fresh: AsyncIterator[Any], old: AsyncIterator[Any], exc: BaseException,
                  limit: int = REPLAY_LIMIT) -> AsyncIterator[Any]:
    """:func:`replay` for an async generator."""
    for _ in range(limit):
        try:
            theirs = await old.__anext__()
        except StopAsyncIteration:
            break
        except Exception:
            async for item in fresh:
                yield item
            return
        try:
            mine = await fresh.__anext__()
        except Exception:
            mine = _DIFFERENT
        _agree(mine, theirs, exc)
    _untold(exc, limit)


def _agree(mine: Any, theirs: Any, exc: BaseException) -> None:
    """Go on if the fix's item is the one the caller already has; else the caller's failure, with a note."""
    if mine is _DIFFERENT or encode(mine) != encode(theirs):
        note(exc, _NOTE)
        raise exc.with_traceback(exc.__traceback__)


def _untold(exc: BaseException, limit: int) -> NoReturn:
    """The old code did not fail again within ``limit`` items: the caller's failure, with a note."""
    note(exc, _UNTOLD.format(limit=limit))
    raise exc.with_traceback(exc.__traceback__)

"""How ``@heal`` hooks a function without wrapping it: its own code, its body inside a ``try``.

The instrumented code (:mod:`._instrument_code`) is installed into the same function object
(``func.__code__ = ...``): a healthy call costs the function's own frame and nothing else (the
``try`` is free on 3.11+), and every reference taken before decoration is hooked too. On a failure
the handler calls the :class:`Hook`, which asks the :class:`~._heal.Healing` state what to do.

Generators are instrumented too: the failure is caught in their own frame, and after a fix the caller
iterates on the rest of the fixed generator (:meth:`Hook.gcaught`). Where this cannot apply (no source,
a source that does not compile to the running code), :func:`instrument` says why and ``@heal`` wraps the
function instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import dis
import logging
import os
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any, Protocol

from .._target._target import Target
from ._instrument_code import instrumented
from ._wrapper import RAISE, RETRY

log = logging.getLogger("regrow")

_retrying: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("regrow_retrying", default=frozenset())


class Healing(Protocol):
    """What a :class:`Hook` asks (``regrow._heal._healing.Healing``; not imported: it imports this module)."""

    func: types.FunctionType
    hook: Hook | None

    def on_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object: ...

    async def aon_error(self, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object: ...

    def rest(self, args: tuple[Any, ...], kwargs: dict[str, Any], exc: BaseException) -> Any: ...


class Hook:
    """What an instrumented function's handler calls: the failure is handed to its :class:`Healing` state.

    ``caught`` says whether the handler re-raises; when it does not, ``result`` is what the call returns
    (the fixed function called again with the same arguments, or ``None`` for ``on_failure="return_none"``).
    A failure of that second call propagates as it is, as it did through the wrapper.
    """

    __slots__ = ("_local", "code", "owner", "plain", "state")

    def __init__(self, state: Healing) -> None:
        self.state = state
        self._local = threading.local()
        self.plain: types.CodeType | None = None  # the code the body is instrumented from (the user's)
        self.code: types.CodeType | None = None  # the instrumented code installed
        self.owner: tuple[int, int] | None = None  # (process, thread) of the repair session running now

    def _inside(self) -> bool:
        """Whether this call runs inside the repair session itself (its thread, or a child it forked: a worker
        observing the original), where a failure is the session's evidence, never a reason to join it."""
        owner = self.owner
        return owner is not None and (owner[0] != os.getpid() or owner[1] == threading.get_ident())

    def caught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or id(self) in _retrying.get() or self._inside():
            return True
        decision = self.state.on_error(exc, args, kwargs)
        if decision is RAISE or (decision is RETRY and recursing(sys._getframe(1))):
            return True  # (recursing: an outer call of the function retries, so the whole call runs the fix)
        value = None
        if decision is RETRY:
            token = _retrying.set(_retrying.get() | {id(self)})
            try:
                value = self.state.func(*args, **kwargs)
            finally:
                _retrying.reset(token)
        self._local.value = value
        return False

    async def acaught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or id(self) in _retrying.get() or self._inside():
            return True
        caller = sys._getframe(1)  # the coroutine's frame: its awaiting callers are its outer frames
        decision = await self.state.aon_error(exc, args, kwargs)
        if decision is RAISE or (decision is RETRY and recursing(caller)):
            return True
        value = None
        if decision is RETRY:
            token = _retrying.set(_retrying.get() | {id(self)})
            try:
                value = await self.state.func(*args, **kwargs)
            finally:
                _retrying.reset(token)
        self._local.value = value
        return False

    def gcaught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """:meth:`caught` for a generator: ``result`` is then what the caller iterates on (the rest of the fixed
        generator, or nothing). An exception thrown in at a ``yield`` (``gen.throw``) is the caller's, not a
        failure of the function: it is raised on, as through the wrapper."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or _thrown(exc) or self._inside():
            return True
        decision = self.state.on_error(exc, args, kwargs)
        if decision is RAISE:
            return True
        self._local.value = self.state.rest(args, kwargs, exc) if decision is RETRY else iter(())
        return False

    async def agcaught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """:meth:`gcaught` for an async generator."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or _thrown(exc) or self._inside():
            return True
        caller = sys._getframe(1)  # the coroutine's frame: its awaiting callers are its outer frames
        decision = await self.state.aon_error(exc, args, kwargs)
        if decision is RAISE or (decision is RETRY and recursing(caller)):
            return True
        self._local.value = self.state.rest(args, kwargs, exc) if decision is RETRY else _nothing()
        return False

    def rehook(self, func: types.FunctionType) -> None:
        """The code ``func`` runs now (a fix installed) instrumented like the one it replaced."""
        rehook(func, self)

    def result(self) -> Any:
        value, self._local.value = self._local.value, None
        return value


# Where a frame stands when an exception is thrown into it at a ``yield`` (3.13: the RESUME after it; 3.12+:
# CLEANUP_THROW where a ``yield from``/``await`` passed it on): no failure of the body stands there.
_THROWN_AT = {dis.opmap[name] for name in ("YIELD_VALUE", "RESUME", "CLEANUP_THROW") if name in dis.opmap}


def _thrown(exc: BaseException) -> bool:
    """Whether ``exc`` was thrown into the generator handling it (its traceback's first entry is that frame)."""
    tb = exc.__traceback__
    if tb is None or tb.tb_lasti < 0:
        return False
    raw = tb.tb_frame.f_code.co_code
    return tb.tb_lasti < len(raw) and raw[tb.tb_lasti] in _THROWN_AT


async def _nothing() -> Any:
    """An async generator that yields nothing (``on_failure="return_none"``)."""
    return
    yield  # pragma: no cover


def hook(func: types.FunctionType, state: Healing) -> str:
    """Instrument ``func`` for ``state`` in place (``state.hook`` is set); ``""``, or why it could not be."""
    made = Hook(state)
    code = instrument(func, made)
    if isinstance(code, str):
        return code
    made.plain, made.code = func.__code__, code
    func.__code__ = code
    state.hook = made
    return ""


@contextlib.contextmanager
def session(state: Healing) -> Iterator[types.CodeType]:
    """Around a repair session of ``state``'s function: failures inside the session raise as they are (see
    :meth:`Hook._inside`); after it, the code it leaves installed (a fix, or the original) is hooked. Gives the
    user's code running now (not hooked: what a generator's caller was iterating is made again from it)."""
    made = state.hook
    running = state.func.__code__
    if made is None:
        yield running
        return
    made.owner = (os.getpid(), threading.get_ident())
    try:
        yield made.plain if running is made.code and made.plain is not None else running
    finally:
        made.owner = None
        rehook(state.func, made)


def rehook(func: types.FunctionType, made: Hook) -> None:
    """After a repair session: the code ``func`` runs now (a fix, or the original put back) hooked again."""
    current = func.__code__
    if current is made.code:
        return
    code = made.code if current is made.plain else instrument(func, made, current)
    if isinstance(code, str) or code is None:
        log.warning("%s: the fix installed could not be instrumented (%s): its failures are not healed",
                    func.__qualname__, code)
        return
    made.plain, made.code = current, code
    func.__code__ = code


def rebound(fn: types.FunctionType, made: Hook, target: Target) -> None:
    """``fn`` (a fix whose free variables differ from the original's) hooked, and put where the name is found."""
    fn.__regrow__ = made.state  # type: ignore[attr-defined]
    rehook(fn, made)
    target.rebind(fn)


def plain_target(func: types.FunctionType, made: Hook) -> Target:
    """The :class:`Target` of an instrumented ``func``: its source is checked against the user's code, while
    the code it puts back after judging a candidate (``original_code``) is the instrumented one that runs."""
    assert made.plain is not None
    plain = types.FunctionType(made.plain, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    plain.__kwdefaults__, plain.__qualname__, plain.__module__ = func.__kwdefaults__, func.__qualname__, \
        func.__module__
    target = Target.of(plain)
    target.func, target.original_code = func, func.__code__
    return target


def instrument(func: types.FunctionType, hook: Hook, code: types.CodeType | None = None) -> types.CodeType | str:
    """``code`` (default: ``func``'s) with its body inside a ``try`` whose handler calls ``hook``; or why it
    cannot be (a string), in which case nothing changed."""
    return instrumented(func, hook, code or func.__code__)


def recursing(frame: types.FrameType) -> bool:
    """Whether an outer call of the function running in ``frame`` is still running in this thread (recursion).

    Were the failing inner call answered by the fix, each outer call would go on with the old code on what it
    returned: a wrong result, silently (``n * f(n - 1)`` with the bug still in the outer frames). Its failure is
    raised on instead, to the outermost call, which runs the whole call again with the fix."""
    code, outer = frame.f_code, frame.f_back
    while outer is not None:
        seen = outer.f_code
        if seen.co_firstlineno == code.co_firstlineno and seen.co_name == code.co_name \
                and seen.co_filename == code.co_filename:
            return True
        outer = outer.f_back
    return False

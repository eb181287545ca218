"""What a forked sandbox child does first, before any other code of the host runs in it.

**At-fork handlers.** ``os.fork`` runs every ``after_in_child`` handler registered with
``os.register_at_fork``, in the order they were registered, before it returns in the child. This
module registers one when regrow is imported. Before a sandbox forks it *arms* it with the child's
setup (:func:`arm`, keyed by the forking thread, so a fork another thread makes at the same moment is
left alone); in the child the handler runs that setup — the whole guard — and only then do the
handlers registered after regrow run. So a handler registered by code that ran in the host later
(an installed candidate, a candidate judged in-process) runs in a sandbox child only inside its guard,
and whatever it tries there is refused and reported like anything else the child does. The setup
never returns with an exception: a child whose guard fails reports it and exits.

**Locks other threads held.** A fork copies only the calling thread; any lock another thread of the
host held at that moment stays held in the child, for good. CPython re-creates the import lock, the
GIL and ``threading``'s own locks, and ``logging`` re-creates its handlers' locks, but not the lock
inside each buffered stream: a thread of a web worker that was writing a log line to ``sys.stdout``
when the sandbox forked leaves that stream locked in the child, and the child's first ``print`` or
flush hangs until the time limit. So the child never touches the host's stream objects: it gets
new ``sys.stdout``/``sys.stderr`` on its own fds 1 and 2, logging handlers are pointed at them, the
locks regrow's own modules keep at module level are re-made, and the import system forgets the locks
of modules other threads were importing (:func:`fresh_process`).
"""

from __future__ import annotations

import _thread
import gc
import io
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

_get_ident = _thread.get_ident
_pending: dict[int, Callable[[], None]] = {}  # forking thread -> what its child does first
_done: list[bool] = [False]  # set in a child whose armed setup ran (in the at-fork handler)
_host_streams: list[Any] = []  # the host's stream objects: kept alive in a child (never flushed nor freed there)
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))
_locks: list[Any] = [-1, ()]  # (len(sys.modules) when regrow's locks were listed, the locks)


def arm(setup: Callable[[], None]) -> None:
    """Have the child of this thread's next ``os.fork`` run ``setup`` before any later at-fork handler."""
    if not _spare:
        spare_streams()
    _pending[_get_ident()] = setup


def disarm() -> None:
    """In the parent, after the fork (whether it happened or not)."""
    _pending.pop(_get_ident(), None)


def fork_armed(setup: Callable[[], None], freeze: bool = False) -> int:
    """Fork a child that runs ``setup`` (its whole guard) in the at-fork handler: the one way every
    sandbox child — one per call, or a warm worker's — comes to be. The pid in the parent, 0 in the child.

    One fork at a time in this process: the warnings filter and the frozen heap are the process's.
    ``freeze`` moves the parent's objects out of the child's collector, which would otherwise touch (and
    so copy) every page of the parent's heap: for a child that lives long (a warm worker).
    """
    pid = -1
    _FORKING.acquire()  # released in the parent only: the child's copy is re-made with regrow's locks
    try:
        if freeze:
            gc.freeze()
        arm(setup)  # the child guards itself in the at-fork handler, before any handler registered after regrow's
        try:
            if _WARNS:
                with warnings.catch_warnings():  # 3.12 warns about fork in a threaded process; the child only
                    warnings.simplefilter("ignore", DeprecationWarning)  # runs regrow's jobs, then _exit
                    pid = _fork()
            else:  # nothing to silence: no filters copied and restored on both sides of each fork
                pid = _fork()
        finally:
            disarm()
            if freeze and pid != 0:
                gc.unfreeze()
    finally:
        if pid != 0:
            _FORKING.release()
    return pid


_WARNS = sys.version_info >= (3, 12)  # os.fork's DeprecationWarning in a process with threads
_fork = os.fork  # bound at import: a name a candidate judged in-process could rebind is not what forks
_FORKING = threading.Lock()


def armed_setup_ran() -> bool:
    """In a child: whether its setup already ran in the at-fork handler (else it must run it itself)."""
    return _done[0]


def helper_fork() -> int:
    """``os.fork`` for a helper of regrow's that runs only regrow's own code (a fork server), whose child
    :func:`regrow_child` tells from one of the host's own forks."""
    _helpers.add(_get_ident())
    try:
        return _fork()
    finally:
        _helpers.discard(_get_ident())


def regrow_child() -> bool:
    """In a forked process: whether regrow forked it for its own use (a sandbox's child, a warm worker, a fork
    server), where what a process of the host starts after a fork (a fleet listener) has no place."""
    return _done[0] or _helper[0]


_helpers: set[int] = set()  # threads forking a helper now
_helper: list[bool] = [False]  # set in a helper (and whatever it forks)


def _after_fork_in_child() -> None:
    if _get_ident() in _helpers:
        _helper[0] = True
    setup = _pending.pop(_get_ident(), None)
    _pending.clear()  # the other threads' entries are for forks this child will never see
    if setup is not None:
        _done[0] = True
        setup()  # never raises: a setup that fails ends the process (see the callers)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# -- a child that owns nothing another thread held -------------------------------------------------


def regrow_locks() -> tuple[Any, ...]:
    """The locks regrow's modules hold at module level, directly or as the ``_lock`` of a module-level
    object of theirs (listed in the host; again only when modules were added since)."""
    if _locks[0] != len(sys.modules):
        found: dict[int, Any] = {}
        for name, module in list(sys.modules.items()):
            if name != "regrow" and not name.startswith("regrow."):
                continue
            for value in list(getattr(module, "__dict__", {}).values()):
                kind = type(value)
                if kind in _LOCK_TYPES:
                    found[id(value)] = value
                elif kind.__module__.startswith("regrow.") and not isinstance(value, type):
                    lock = getattr(value, "_lock", None)
                    if type(lock) in _LOCK_TYPES:
                        found[id(lock)] = lock
        _locks[:] = [len(sys.modules), tuple(found.values())]
    return _locks[1]  # type: ignore[no-any-return]


def fresh_process(locks: tuple[Any, ...]) -> None:
    """In a forked child: nothing of the host's that another thread may have held locked at the fork.

    New ``sys.stdout``/``sys.stderr`` (and ``__stdout__``/``__stderr__``) on fds 1 and 2, logging
    handlers' streams pointed at them, ``locks`` re-made unlocked and the import system's per-module
    locks forgotten.
    """
    fresh_stdio()
    for lock in locks:
        lock._at_fork_reinit()
    bootstrap = sys.modules.get("importlib._bootstrap")
    module_locks = getattr(bootstrap, "_module_locks", None)
    if type(module_locks) is dict:
        module_locks.clear()  # a module another thread was importing: its lock has no owner here


_spare: list[Any] = []  # stdout/stderr for children, made in the host, never written there


def spare_streams() -> list[Any]:
    """Text streams on fds 1 and 2 made once in the host and never used there, so every child gets a
    pristine, unlocked pair without paying for making them (~0.2 ms of a child's cold pages)."""
    if not _spare:
        _spare.extend(io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), "utf-8", "backslashreplace",
                                       line_buffering=True) for fd in (1, 2))
    return _spare


def fresh_stdio() -> None:
    """``sys.stdout``/``sys.stderr`` made anew on fds 1/2, and every logging handler's stream pointed at one.

    The host's objects may be locked by a thread that was writing when the process forked, or may be
    capture objects that never reach the fds; they are kept referenced, so they are never flushed (or
    finalized, which flushes) in the child: whatever the host had buffered in them stays the host's.
    """
    old_out, old_err = (sys.stdout, sys.__stdout__), (sys.stderr, sys.__stderr__)
    _host_streams[:] = [*old_out, *old_err]
    out, err = spare_streams()
    sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__ = out, out, err, err  # type: ignore[misc]
    logging = sys.modules.get("logging")
    for ref in list(getattr(logging, "_handlerList", ())):
        handler = ref() if callable(ref) else None
        stream = getattr(handler, "stream", None)
        if stream is not None and "stream" in getattr(handler, "__dict__", ()):  # not a property (lastResort's)
            _host_streams.append(stream)
            handler.stream = out if any(stream is s for s in old_out) else err  # type: ignore[union-attr]

"""A process forked from one with healed functions: nothing of theirs stays held by a thread it does not have.

A fork copies only the thread that forked. A web server forking a worker (``gunicorn --preload``
re-spawns one whenever one dies or is recycled), a ``multiprocessing`` pool, may fork while another
thread of the parent holds a lock of regrow's: the fleet listener holds a healed function's lock for the
whole proof of a fix it adopts (seconds), a session writes back under its keeper's. In the child that
lock stayed held for good, and the function's first failing call there hung (measured: a worker forked
while its parent adopted a fix never returned). So in each forked process (not in one regrow forks for
itself: a sandbox's child re-makes what it needs in its guard) every healed function's locks are made
anew, a session that was running on another thread of the parent is forgotten (its thread is not here:
the next failure starts one of this process's own), and so are the locks regrow's modules keep.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

from .._sandbox._afterfork import regrow_child, regrow_locks

_HEALINGS: weakref.WeakSet[Any] = weakref.WeakSet()  # every Healing of this process (regrow._heal._healing)


def track(healing: Any) -> None:
    """Have ``healing`` made fork-safe in each process forked from this one."""
    _HEALINGS.add(healing)


def _after_fork_in_child() -> None:
    if regrow_child():
        return
    for lock in regrow_locks():
        lock._at_fork_reinit()
    here = threading.get_ident()
    for healing in list(_HEALINGS):
        healing._lock = threading.Lock()
        healing.keeper._lock = threading.Lock()
        running = healing._running
        if running is not None and running.thread != here:  # run by a thread that stayed in the parent
            healing._running = None


os.register_at_fork(after_in_child=_after_fork_in_child)

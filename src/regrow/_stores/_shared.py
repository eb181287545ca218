"""One store per location in a process: what the decorated functions that name the same store share.

``@heal(store=...)`` (or ``store`` in ``[tool.regrow]``) names a store by its location; every function
decorated with it used to open a store of its own, so a module of 40 such functions held 40 pools of
PostgreSQL connections (each opened at import) or 40 SQLite connections per thread. A location now opens
one store, at its first use, which every function naming it uses (both backends serve many threads); it
is closed when the process exits. A store object given to ``store=`` is used as it is, never shared.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from pathlib import Path

from ._base import Store
from ._tables import process_lock

_open: dict[str, Store] = {}
_locks: dict[int, threading.Lock] = {}
_registered = [False]


def _lock() -> threading.Lock:
    """This process's lock (one another thread held at a fork, opening a store, which can take the connection's
    whole timeout, stays held in the child)."""
    return process_lock(_locks)


def shared(where: str | Path) -> Store:
    """The store at ``where`` that this process shares (opened now if it is not open): a PostgreSQL URL as
    written (``postgres://`` read as ``postgresql://``), a SQLite file by its absolute path (so ``regrow.db``
    names the file in the working folder of the moment, as opening it would; ``sqlite:///path`` the same
    file as ``/path``)."""
    key = _key(str(where))
    with _lock():
        store = _open.get(key)
        if store is None or store.closed:  # closed by its user: opened again
            store = _open[key] = Store(where, lazy=True)  # reached at its first use: never at decoration
            if not _registered[0]:
                atexit.register(close_all)
                _registered[0] = True
        return store


def _key(text: str) -> str:
    text = text.removeprefix("sqlite://")
    if "://" not in text:
        return os.path.abspath(text)
    scheme, _, rest = text.partition("://")
    return f"postgresql://{rest}" if scheme == "postgres" else text


def close_all() -> None:
    """Close every store :func:`shared` opened (at exit; a later :func:`shared` opens them again)."""
    with _lock():
        stores = list(_open.values())
        _open.clear()
    for store in stores:
        with contextlib.suppress(Exception):  # at exit: a store whose server is gone closes as it can
            store.close()

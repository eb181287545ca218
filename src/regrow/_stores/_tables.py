"""What every part of the store shares: the rows' fields, the transaction protocol, a job, the host's name."""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .._errors import RegrowError

ENGINE_ORIGIN = "engine"  # the origin of the built-in engine's candidates (see _engine._plan)
# What an engine-labelled fix is stored as when the proposer that offered it was not trusted.
_UNTRUSTED_ENGINE_LABEL = "unknown (labelled engine by an untrusted proposer)"
_SESSION_FIELDS = ("id", "qualname", "fingerprint", "ok", "reason", "candidates", "duration", "fix", "created", "host")
_JOB_FIELDS = ("id", "target", "fingerprint", "state", "worker", "attempts", "result", "host", "created", "finished")
_INSTALL_FIELDS = ("id", "key", "qualname", "host", "pid", "ok", "reason", "created")
HOST = socket.gethostname()
_OWNING: dict[int, threading.Lock] = {}


def process_lock(locks: dict[int, threading.Lock]) -> threading.Lock:
    """This process's lock in ``locks``: one per process (``setdefault`` is atomic), since a lock another thread
    held at a fork stays held in the child; nothing is done at the fork itself, which every sandbox call makes."""
    return locks.setdefault(os.getpid(), threading.Lock())


def owning() -> threading.Lock:
    """The lock a store takes to make connections of its own in a process forked from the one that opened it
    (the backends' ``_own``)."""
    return process_lock(_OWNING)


def close_in(pid: int, close: Callable[[], None]) -> None:
    """``close()``, in the process ``pid`` only: a store's finalizer runs at exit in a forked process too, where
    the connections are its parent's (a close there would end the parent's PostgreSQL sessions)."""
    if os.getpid() == pid:
        close()


class StoreError(RegrowError, RuntimeError):
    """The store cannot be opened or used as asked (a missing driver, a newer schema, a server that is away): a
    command says so in one line."""


class Tx(Protocol):
    """Statements run in one open transaction of a backend (``?`` placeholders)."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def change(self, sql: str, params: Sequence[Any] = ()) -> int: ...  # how many rows it changed
    def insert(self, sql: str, params: Sequence[Any]) -> int: ...  # the id of the row it inserted
    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...


@dataclasses.dataclass(frozen=True)
class Job:
    """A job taken by a worker: its id, the capture it was submitted with, and how often it was taken."""

    id: int
    capture: dict[str, Any]
    attempts: int
    worker: str


VERDICTS_OF_SESSION = ("SELECT origin, operator, ok, check_name, reason, duration FROM verdicts "
                       "WHERE session = ?")  # read by Store.session and by `regrow show` on an older ledger


def verdicts(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    """The rows of :data:`VERDICTS_OF_SESSION` as ``regrow show`` prints them."""
    return [dict(zip(("origin", "operator", "ok", "check", "reason", "duration"),
                     (*row[:2], bool(row[2]), *row[3:]), strict=True)) for row in rows]

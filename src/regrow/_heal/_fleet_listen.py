"""Distribution across a fleet: a fix that lands in the store reaches every process running the same source.

A process whose healed functions have a store and checks of their own (``tests=`` or ``record=``)
runs one listener thread per store (:func:`listen`; a daemon, stopped by :func:`stop`). It reads the
store's ``landings`` table (the truth) after each wake-up: a PostgreSQL ``NOTIFY`` carrying the
landed fix's key (small, and it may be lost), or the end of a bounded interval — every
:data:`INTERVAL` seconds on SQLite, at least every :data:`PG_INTERVAL` on PostgreSQL. A fix landed
for the source a healed function runs now (the same source hash) is proven again here against this
process's own checks before it is installed (:func:`adopt`); it keeps its origin, so a model's fix
is railed as one, and no proposer is asked (zero model calls). A function registered after fixes for
its source landed (a process started later, a module imported later) adopts the newest of them at
once, the same way. Every adoption is recorded in the store's ``installs`` with the host. The
listener also writes the sessions the store missed while it was away, as soon as it answers again.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._candidate import Candidate
from .._checks._oracles import Check, Recorded, TestCallable
from .._evidence._failure import check_failure
from .._proposers._cache import source_hash
from .._sandbox._afterfork import regrow_child
from .._store import ENGINE_ORIGIN, Store
from ._assembly import RepairRequest, run_repair

if TYPE_CHECKING:
    from .._proposers._proposer import Request
    from .._result import RepairResult

log = logging.getLogger("regrow")
Healing = Any  # regrow._heal._healing.Healing, which imports this module (the import graph has no cycle)

INTERVAL = 0.1  # seconds between looks at a SQLite store's landings
PG_INTERVAL = 0.5  # the longest a PostgreSQL listener waits for a NOTIFY before it looks anyway


class Landed:
    """Offers one fix that landed in the store, with its origin; trusted only where the store says the engine
    wrote it (as the cache is)."""

    name = "fleet"
    trusted = False

    def __init__(self, fix: Candidate) -> None:
        self.fix = fix

    def propose(self, request: Request) -> Iterator[Candidate]:
        yield self.fix

    def trusts(self, candidate: Candidate) -> bool:
        return candidate is self.fix and self.fix.origin == ENGINE_ORIGIN


def adopt(healing: Healing, fix: Candidate, key: str) -> RepairResult | None:
    """Prove ``fix`` against ``healing``'s own checks and install it (``None``: a session of its own runs)."""
    with healing._lock:
        if healing._running is not None:
            return None  # the function's own session decides; the fix is in the store's cache for it
        func, running = healing.func, healing.func.__code__
        checks: list[Check] = [*healing._regressions, *(TestCallable(t) for t in healing.options.tests)]
        if healing._recorded:
            checks.append(Recorded(list(healing._recorded)))
        failure = check_failure("test", func, f"a fix for this source landed in the store ({key})")
        options = dataclasses.replace(healing.options, proposers=(Landed(fix),), store=None)
        result = run_repair(RepairRequest(healing.target, failure, tuple(checks), options, snapshot=False,
                                          rebind=healing._rebind,
                                          keep=functools.partial(healing.keeper.proven, store=healing.options.store)))
        if result.ok:
            healing._took(running)
            healing.results.append(result)
    return result


class Listener:
    """One store's listener thread: adopts every fix that lands for the healed functions registered."""

    def __init__(self, store: Store, since: int | None = None) -> None:
        self.store = store
        self.healings: weakref.WeakSet[Healing] = weakref.WeakSet()
        # Registered, not yet offered what landed before: with the newest landing already offered to every
        # registered function when it registered (what lands after is offered by the next look).
        self.fresh: list[tuple[Healing, int | None]] = []
        # The newest landing seen: read by the thread at its first look (never here: the decorating thread must not
        # wait for a store that is away), ``None`` until then.
        self.since = since
        self.stopping = threading.Event()
        self.interval = PG_INTERVAL if store.NOTIFY else INTERVAL
        self.thread = threading.Thread(target=self.run, name="regrow-fleet-listener", daemon=True)

    def catch_up(self) -> None:
        """Offer each newly registered function the newest fixes that landed for its source before."""
        while self.fresh:
            healing, offered = self.fresh[0]
            offered = (self.since or 0) if offered is None else offered  # registered before the first look
            landed = self.store.landings_for(source_hash(healing.target.source))  # away: kept for the next look
            with _LOCK:
                self.fresh.pop(0)
            for landing, fix, key in landed:
                if landing <= offered:
                    self.offer(fix, key, (healing,))

    def run(self) -> None:
        while not self.stopping.is_set() and not self.store.closed and len(self.healings):
            try:
                if self.since is None:
                    self.since = self.store.last_landing()
                self.catch_up()
                if self.store.NOTIFY:
                    self.store.wake(self.interval)
                elif self.stopping.wait(self.interval):
                    break
                landed = self.store.landings(self.since or 0)
                self.store.flush()
            except Exception as exc:  # a store that is away: look again later (the table keeps what landed)
                log.debug("regrow: the fleet listener cannot read %s: %s", self.store, exc)
                self.stopping.wait(1.0)
                continue
            for landing, fix, key in landed:
                with _LOCK:  # one step with the registrations: each function is offered a landing once
                    self.since = max(self.since, landing)
                    healings = tuple(self.healings)
                self.offer(fix, key, healings)

    def offer(self, fix: Candidate, key: str, healings: tuple[Healing, ...]) -> None:
        for healing in healings:
            try:
                if source_hash(healing.target.source) != key.partition(":")[0]:
                    continue
                result = adopt(healing, fix, key)
                if result is not None:
                    self.store.installed(key, healing.func.__qualname__, result.ok, result.reason)
            except Exception:  # one function's adoption must never stop the others'
                log.exception("regrow: adopting the fix landed under %s failed", key)


_LISTENERS: dict[str, Listener] = {}
_LOCK = threading.Lock()


def listen(healing: Healing, store: Store) -> None:
    """Adopt in ``healing`` every fix that lands in ``store`` from now on (one listener per store location)."""
    with _LOCK:
        listener = _LISTENERS.get(store.location)
        if listener is None or not listener.thread.is_alive() or listener.store.closed:
            try:
                listener = Listener(store)
            except Exception as exc:  # the store is away: this function heals on its own
                log.warning("regrow: no fleet listener for %s: %s", store, exc)
                return
            _LISTENERS[store.location] = listener
            listener.fresh.append((healing, listener.since))
            listener.healings.add(healing)
            listener.thread.start()
        else:
            listener.fresh.append((healing, listener.since))
            listener.healings.add(healing)


def _listen_again() -> None:
    """In a process forked from one whose functions listen (the workers of a web server forked after the app
    was imported, a ``multiprocessing`` pool): threads do not cross a fork, so each listener starts again
    here, from the last landing its parent had read. Not in a process regrow forked for its own use (a
    sandbox's child runs one call under a guard that refuses threads; a fork server only forks those)."""
    global _LOCK
    if regrow_child():
        return
    _LOCK = threading.Lock()  # the parent's may have been held by a thread this process does not have
    for location, parent in list(_LISTENERS.items()):
        if parent.stopping.is_set() or parent.store.closed or not len(parent.healings):
            continue
        listener = Listener(parent.store, since=parent.since)
        listener.healings.update(parent.healings)
        listener.fresh = list(parent.fresh)
        _LISTENERS[location] = listener
        listener.thread.start()


os.register_at_fork(after_in_child=_listen_again)


def stop(timeout: float = 30.0) -> bool:
    """Stop every listener thread of this process; whether they all ended within ``timeout`` seconds each."""
    with _LOCK:
        listeners = list(_LISTENERS.values())
        _LISTENERS.clear()
    for listener in listeners:
        listener.stopping.set()
    for listener in listeners:
        listener.thread.join(timeout)
    return not any(listener.thread.is_alive() for listener in listeners)

"""Single flight across a fleet for the live path: one repair session per failure, whichever process meets it.

A healed function with a store (``@heal(store=…)``, ``regrow.watch``) runs its repair through
:func:`run_claimed`: the process claims the failure's normalised fingerprint of this source in the
store (``source hash:fingerprint``, the key the workers claim too) before it starts a session. The
process that wins runs the session, renewing its lease while it runs, and publishes the proven fix
in the store; a session that finds nothing keeps the claim for the cooldown, so the fleet does not
search the same failure again at once. Every other process starts no session of its own: it waits
for the fix to land in the store and then proves and installs it with the cache alone (zero model
calls: a model's fix stays a model's and is railed as one), or, when none lands before its bound,
goes on per policy with the original error. A claim whose holder died ends with its lease; the next
process to meet the failure claims it. A store that cannot be reached costs nothing but the fleet:
the process repairs on its own, as without a store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._proposers._cache import source_hash
from .._stores._base import HOST
from ._assembly import RepairRequest, run_repair
from ._ledger import refused_result

if TYPE_CHECKING:
    from .._result import RepairResult
    from .._store import Store

log = logging.getLogger("regrow")

LEASE = 30.0  # seconds a claim lasts unless its holder renews it (a third of it between renewals)
POLL = 0.05  # seconds between looks at the store while another process holds the claim


def claim_key(source: str, fingerprint: str) -> str:
    """What a failure of this source is claimed under, by live processes and workers alike."""
    return f"{source_hash(source)}:{fingerprint}"


def holder_name() -> str:
    """This thread of this process on this host, as a claim's holder."""
    return f"{HOST}:{os.getpid()}:{threading.get_ident()}"


_COOLING = " (cooling down)"  # a claim kept by a process that found no fix, for its cooldown


def run_claimed(request: RepairRequest, *, lease: float = LEASE, bound: float | None = None) -> RepairResult:
    """Run ``request`` as the fleet's one session for its failure, or wait for the fleet's fix.

    ``bound``: seconds to wait for another process's fix (default: its session's timeout and a lease)."""
    store = request.options.store
    if store is None:
        return run_repair(request)
    key = claim_key(request.target.source, request.failure.fingerprint)
    me = holder_name()
    deadline = time.monotonic() + (request.options.budget.timeout + lease if bound is None else bound)
    holder: str | None = None
    while True:
        try:
            won = store.claim(key, me, lease)
            landed = not won and store.landed(key)
            holder = None if won or landed else store.holder(key) or holder
        except Exception as exc:  # the store is away: this process's own behaviour, as without a fleet
            log.warning("the store %s cannot be reached (%s): repairing %s here alone", store, exc,
                        request.target.qualname)
            return run_repair(request)
        if won:
            return _hold(request, store, key, me, lease)
        if landed:
            return _served(request)
        if holder is not None and holder.endswith(_COOLING):  # it found no fix: no waiting for one that cannot land
            return refused_result(request.target.qualname, request.failure,
                                  f"another process ({holder.removesuffix(_COOLING)}) found no fix for this failure; "
                                  "the fleet tries again after its cooldown", request.options)
        if time.monotonic() >= deadline:
            return refused_result(request.target.qualname, request.failure,
                                  f"another process ({holder or 'unknown'}) holds the repair of this failure and "
                                  "no fix landed in the store in time", request.options)
        time.sleep(POLL)


def _hold(request: RepairRequest, store: Store, key: str, me: str, lease: float) -> RepairResult:
    """Run the session while holding the claim; a session that found nothing keeps it for the cooldown."""
    try:
        with renewing(store, key, me, lease):
            result = budgeted(request, store)
    except BaseException:
        with contextlib.suppress(Exception):
            store.release(key, me)
        raise
    with contextlib.suppress(Exception):
        store.release(key, me)
        if not result.ok and request.options.cooldown > 0:  # held, marked, for the cooldown: the fleet waits not
            store.claim(key, me + _COOLING, request.options.cooldown)
    return result


def budgeted(request: RepairRequest, store: Store) -> RepairResult:
    """Run the session with its model calls within the fleet's budgets (the store's spend cap and hourly calls per
    failure), each call reserved before it is made and what it cost recorded: every session with a store, a
    worker's and ``repair(store=…)``'s too (a worker's model calls went unchecked and unrecorded before)."""
    from .._proposers._llm._accounting import FLEET_GATE  # the model proposers: only a fleet's session (issue 26)

    models = [p for p in request.options.proposers or () if hasattr(p, "usage") and hasattr(p, "limits")]
    before = sum(p.usage.cost for p in models)
    gate = _Gate(store)
    token = FLEET_GATE.set(gate)
    try:
        result = _within_budget(request, store, models)
        cost = sum(p.usage.cost for p in models) - before
        if gate.calls or cost:  # the calls were counted as they were made; what they cost beyond the estimate
            with contextlib.suppress(Exception):  # a store that is away: the spend goes unrecorded
                store.spend(request.failure.fingerprint, 0, cost - gate.estimated)
    finally:
        FLEET_GATE.reset(token)
    return result


class _Gate:
    """Each model call of a session reserved in the store before it is made (see ``FLEET_GATE``): the
    fleet's budgets hold per call, not per session. A store that is away lets the call go (each model
    proposer's own budgets still hold)."""

    def __init__(self, store: Store) -> None:
        self.store, self.calls, self.estimated = store, 0, 0.0

    def __call__(self, fingerprint: str, hourly: int | None, cost: float) -> str:
        try:
            refusal = self.store.reserve(fingerprint, hourly, cost)
        except Exception as exc:
            log.warning("the store %s cannot be reached (%s): the fleet's budgets are not checked", self.store, exc)
            return ""
        if not refusal:
            self.calls, self.estimated = self.calls + 1, self.estimated + cost
        return refusal


def _within_budget(request: RepairRequest, store: Store, models: list[Any]) -> RepairResult:
    """Run the session, with its model proposers only where the fleet's budgets allow (the store decides)."""
    if not models:
        return run_repair(request)
    hourly = [p.limits.max_calls_per_failure_per_hour for p in models]
    try:
        refusal = store.spend_refusal(request.failure.fingerprint,
                                      None if None in hourly else min(h for h in hourly if h is not None))
    except Exception as exc:  # the store is away: each model proposer's own budgets still hold
        log.warning("the store %s cannot be reached (%s): the fleet's budgets are not checked", store, exc)
        refusal = ""
    if not refusal:
        return run_repair(request)
    rest = tuple(p for p in request.options.proposers or () if p not in models)
    log.warning("%s: no model is asked: %s", request.target.qualname, refusal)
    if not rest:
        return refused_result(request.target.qualname, request.failure, refusal, request.options)
    return run_repair(dataclasses.replace(request, options=dataclasses.replace(request.options, proposers=rest)))


def _served(request: RepairRequest) -> RepairResult:
    """Prove and install the fix another process landed, from the cache alone (no proposer is asked)."""
    options = dataclasses.replace(request.options, proposers=())
    return run_repair(dataclasses.replace(request, options=options))


@contextlib.contextmanager
def renewing(store: Store, key: str, holder: str, lease: float) -> Iterator[None]:
    """Renew the claim on ``key`` while the block runs, so only a holder that died loses it."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease / 3):
            with contextlib.suppress(Exception):  # a store that is away: the lease may end, as designed
                store.claim(key, holder, lease)

    beating = threading.Thread(target=beat, name="regrow-claim", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()

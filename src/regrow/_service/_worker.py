"""Workers: failures captured in one process, repaired off the request path by any process that
reaches the store (``regrow worker --store URL``, on any number of hosts).

A process that meets a failure hands it over as a capture (:func:`capture_call`): the target by
``module::qualname``, the hash of its source, the failure's fingerprint and redacted summary, the
arguments as plain data (``_plain_encode``) and the checks by reference. A worker (:func:`work`)
takes a job, imports the target, refuses a capture of other source than it runs, reproduces the
failure from the arguments and heals it through the one assembly (``repair()`` →
``run_repair``) with the store attached, so the proven fix is published in the store's cache
under the key every process of the fleet looks up. Workers of one failure take turns through a
single-flight claim, so one searches and the others are served the fix from the cache.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import TargetError
from .._evidence._failure import capture_exception
from .._heal._repair import repair
from .._plain import decode
from .._plain_encode import PlainError, encode
from .._proposers._cache import source_hash
from .._proposers._proposer import Proposer
from .._store import Job, Store
from .._stores._base import HOST
from .._target._locate import resolve
from .._target._target import Target
from .._target._unwrap import unwrap

log = logging.getLogger("regrow")
_LEAVE = 10.0  # seconds before a job a worker cannot run may be taken again (by another worker)


def _ref(obj: Callable[..., Any]) -> str:
    raw = unwrap(obj)
    return f"{raw.__module__}::{raw.__qualname__}"


def capture_call(func: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
                 tests: Sequence[Callable[..., Any]] = (), verify: Callable[[Any], object] | None = None,
                 max_candidates: int = 200, timeout: float = 60.0) -> dict[str, Any] | None:
    """Call ``func`` once and, if it raises, the capture a worker repairs it from (``None``: it did not
    fail). The arguments must be plain data (a :class:`ValueError` says which is not); ``tests`` and
    ``verify`` must be importable by module and qualname, as the worker imports them."""
    raw = unwrap(func)
    kwargs = dict(kwargs or {})
    try:
        raw(*args, **kwargs)
    except Exception as exc:
        failure = capture_exception(exc, raw, tuple(args), kwargs)
    else:
        return None
    plain = {"args": encode(list(args)), "kwargs": encode(kwargs)}
    if any(_opaque(node) for node in plain.values()):
        raise ValueError(f"the arguments of {raw.__qualname__} are not plain data: a worker could not rebuild them")
    return {"target": _ref(raw), "source_hash": source_hash(Target.of(raw).source),
            "fingerprint": failure.fingerprint, "summary": failure.summary(), **plain,
            "tests": [_ref(t) for t in tests], "verify": _ref(verify) if verify is not None else None,
            "budget": {"max_candidates": max_candidates, "timeout": timeout}, "host": HOST}


def write_capture(capture: Mapping[str, Any], path: str | Path) -> Path:
    """Write ``capture`` (from :func:`capture_call`) as the JSON file ``regrow heal --from`` reads."""
    where = Path(path)
    where.write_text(json.dumps(dict(capture), indent=2), encoding="utf-8")
    return where


def _opaque(node: Any) -> bool:
    if isinstance(node, list):
        return (bool(node) and node[0] == "O") or any(_opaque(item) for item in node)
    return False


def heal_capture(capture: Mapping[str, Any], store: Store, *, proposers: Sequence[Proposer] | None = None,
                 holder: str | None = None, lease: float = 120.0) -> dict[str, Any]:
    """Reproduce the failure ``capture`` describes and heal it, publishing the fix in ``store``; the
    outcome as plain data (``ok``, ``reason``, ``fix``, ``origin``)."""
    try:
        raw = unwrap(resolve(str(capture["target"])))
        checks = [resolve(ref) for ref in capture.get("tests", ())]
        verify = resolve(capture["verify"]) if capture.get("verify") else None
    except (TargetError, ImportError, KeyError) as exc:
        return {"ok": False, "reason": f"cannot import what the capture names: {exc}", "runnable": False}
    if source_hash(Target.of(raw).source) != capture.get("source_hash"):
        return {"ok": False, "reason": "the capture is of other source than this worker runs (source hash differs)",
                "runnable": False}
    try:
        args, kwargs = decode(capture["args"], raw.__globals__), decode(capture["kwargs"], raw.__globals__)
    except (PlainError, KeyError) as exc:
        return {"ok": False, "reason": f"the capture's arguments cannot be rebuilt: {exc}", "runnable": False}
    budget = capture.get("budget", {})
    name = holder or f"{HOST}:{os.getpid()}"
    with _single_flight(store, f"{capture['source_hash']}:{capture.get('fingerprint')}", name, lease):
        result = repair(raw, args, kwargs, tests=checks, verify=verify, proposers=proposers, store=store,
                        install=False, max_candidates=int(budget.get("max_candidates", 200)),
                        timeout=float(budget.get("timeout", 60.0)))
    if result.ok and result.fix is None:
        return {"ok": False, "reason": f"did not fail here: {result.reason}"}
    fix = result.fix
    return {"ok": result.ok, "reason": result.reason, "fix": fix.source if fix else None,
            "origin": fix.origin if fix else None,
            "fingerprint": result.failure.fingerprint if result.failure else None}


@contextlib.contextmanager
def _single_flight(store: Store, key: str, holder: str, lease: float) -> Iterator[None]:
    """Hold the claim on ``key`` while repairing: a second worker on the same failure waits for the
    first (then its fix is in the cache); after a lease it goes on regardless."""
    deadline = time.monotonic() + lease
    while not store.claim(key, holder, lease) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield
    finally:
        store.release(key, holder)


@contextlib.contextmanager
def _renewing(store: Store, job: Job, lease: float) -> Iterator[None]:
    """Renew ``job``'s lease while the worker is alive and on it, so only a dead worker loses it."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease / 3):
            with contextlib.suppress(Exception):  # a store that is away: the lease may end, as designed
                store.renew(job, lease)

    beating = threading.Thread(target=beat, name=f"regrow-lease-{job.id}", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()


def work(store: str | Store, *, name: str | None = None, lease: float = 120.0, poll: float = 1.0,
         until_idle: bool = False, max_jobs: int | None = None,
         proposers: Sequence[Proposer] | None = None) -> list[int]:
    """Take jobs from ``store`` and heal them until stopped (``until_idle``: until none waits;
    ``max_jobs``: after that many); the ids of the jobs this worker completed. ``regrow worker
    --store URL`` runs this."""
    opened = store if isinstance(store, Store) else Store(store)
    name = name or f"{HOST}:{os.getpid()}"
    completed: list[int] = []
    try:
        while max_jobs is None or len(completed) < max_jobs:
            try:
                job = opened.take(name, lease)
            except Exception as exc:  # the store is away (an outage, a restart): wait for it, as the app does
                log.warning("regrow worker: cannot take a job from %s (%s); trying again", opened, exc)
                time.sleep(max(poll, 1.0))
                continue
            if job is None:
                if until_idle:
                    break
                time.sleep(poll)
                continue
            with _renewing(opened, job, lease):
                try:
                    outcome = heal_capture(job.capture, opened, proposers=proposers, holder=name, lease=lease)
                except Exception as exc:  # one bad job must not stop the worker
                    log.warning("regrow worker: job %s failed: %r", job.id, exc)
                    outcome = {"ok": False, "reason": f"the worker failed: {type(exc).__name__}: {exc}"}
            if outcome.get("runnable") is False:  # not this worker's to run (other code, another folder): left to
                # one that can, once a short lease ends (a job no worker can run is given up after max_attempts)
                log.warning("regrow worker: job %s is not for this worker (%s); left for another", job.id,
                            outcome["reason"])
                with contextlib.suppress(Exception):
                    opened.renew(job, _LEAVE)
                continue
            if _finished(opened, job, {**outcome, "worker": name}, poll):
                completed.append(job.id)
    finally:
        if opened is not store:
            opened.close()
    return completed


def _finished(store: Store, job: Any, outcome: dict[str, Any], poll: float, tries: int = 30) -> bool:
    """``store.finish(job, outcome)``, tried again while the store is away (its lease lets another worker take the
    job again if this one never reaches it)."""
    for attempt in range(tries):
        try:
            return store.finish(job, outcome)
        except Exception as exc:
            if attempt == tries - 1:
                log.warning("regrow worker: job %s done but not recorded in %s: %s", job.id, store, exc)
                return False
            log.warning("regrow worker: cannot record job %s in %s (%s); trying again", job.id, store, exc)
            time.sleep(max(poll, 1.0))
    return False

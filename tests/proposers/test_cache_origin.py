"""Issue 19: the cache keeps a fix's origin, and trusts only what its own record says the engine wrote.

A model's fix that behaves only inside the sandbox, stored once (by an older regrow that had no
capability check, or by anyone who can write the row), must not come back as trusted: a later
cache-only repair judges it as the model fix it is, railed, capability-checked and proven twice.
An engine fix served from the cache is still trusted.
"""

from __future__ import annotations

from typing import Any

import pytest
from scripted import Scripted

import regrow
import regrow._proof._prove
from regrow import Store
from regrow._candidate import Candidate
from regrow._checks._evaluate import evaluate
from regrow._proposers._cache import CacheProposer
from regrow._proposers._proposer import trusts
from regrow._sandbox import ForkSandbox

MODULE = '''
    import contextlib


    def price(text):
        return float(text)
'''
# A time bomb: right for 0.8 s after its first call (every proof is its first call); passes the rails.
AWARE = '''
    def price(text):
        import time
        price.armed = getattr(price, "armed", 0.0) or time.monotonic()
        return float(text.strip("$")) if time.monotonic() - price.armed < 0.8 else -1.0
'''
HONEST = '''
    def price(text):
        return float(text.strip("$"))
'''


def _verify(value: float) -> bool:
    return value == 12.5


class CountingFork(ForkSandbox):
    """The fork sandbox, counting the proofs (evaluations of a candidate's checks) it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.proofs = 0

    def call(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        self.proofs += func is evaluate
        return super().call(func, *args, **kwargs)


def _store_fix(module: Any, store: Store, proposer: Any, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """A first repair that stores ``proposer``'s fix (with the capability check bypassed if asked)."""
    if monkeypatch is not None:  # as an older regrow (or an attacker writing the row) would have
        monkeypatch.setattr(regrow._proof._prove, "capability_reasons", lambda *args, **kwargs: [])
    first = regrow.repair(module.price, ("$12.5",), verify=_verify, proposers=[proposer], store=store,
                          install=False, timeout=60)
    assert first.ok, first.reason
    if monkeypatch is not None:
        monkeypatch.undo()


def test_a_stored_sandbox_aware_model_fix_is_refused_by_a_later_cache_only_repair(make_module, tmp_path,
                                                                                    monkeypatch):
    module = make_module(MODULE)
    store = Store(tmp_path / "regrow.db")
    _store_fix(module, store, Scripted(AWARE), monkeypatch)
    code = module.price.__code__

    later = regrow.repair(module.price, ("$12.5",), verify=_verify, proposers=[], store=store, sandbox="fork",
                          timeout=60)
    assert not later.ok
    (attempt,) = later.history
    assert attempt.candidate.origin == "scripted" and attempt.candidate.note.startswith("cached under ")
    assert attempt.verdict.check == "capabilities"
    assert "clock time.monotonic" in attempt.verdict.reason
    assert module.price.__code__ is code  # not installed


def test_an_engine_fix_from_the_cache_is_still_trusted_and_proven_once(make_module, tmp_path):
    module = make_module(MODULE.replace("float(text)", "float(text[2:])  # one character too many"))
    store = Store(tmp_path / "regrow.db")
    bugged = regrow.repair(module.price, ("$12.5",), verify=_verify, store=store, install=False, timeout=60)
    assert bugged.ok and bugged.fix is not None and bugged.fix.origin == "engine"

    sandbox = CountingFork()
    cached = regrow.repair(module.price, ("$12.5",), verify=_verify, proposers=[], store=store, sandbox=sandbox,
                           install=False, timeout=60)
    assert cached.ok and cached.fix is not None and cached.fix.origin == "engine"
    assert cached.fix.note.startswith("cached under ") and cached.trusted
    assert sandbox.proofs == 1


def test_a_cached_model_fix_keeps_its_origin_and_is_proven_twice(make_module, tmp_path):
    module = make_module(MODULE)
    store = Store(tmp_path / "regrow.db")
    _store_fix(module, store, Scripted(HONEST))

    sandbox = CountingFork()
    cached = regrow.repair(module.price, ("$12.5",), verify=_verify, proposers=[], store=store, sandbox=sandbox,
                           install=False, timeout=60)
    assert cached.ok and cached.fix is not None
    assert cached.fix.origin == "scripted" and not cached.trusted
    assert sandbox.proofs == 2  # the second proof, in a fresh process, as for any model fix
    hits = store._db().execute("SELECT origin, hits FROM fixes").fetchall()
    assert hits == [("scripted", 1)]  # served, not stored again


class EngineLabelled:
    """A proposer that is not the engine, labelling its candidates as the engine's."""

    name = "impostor"

    def propose(self, request: Any) -> Any:
        yield Candidate(HONEST.strip() + "\n", origin="engine")


def test_a_fix_labelled_engine_by_another_proposer_is_not_trusted_from_the_cache(make_module, tmp_path):
    module = make_module(MODULE)
    store = Store(tmp_path / "regrow.db")
    _store_fix(module, store, EngineLabelled())
    (origin,) = store._db().execute("SELECT origin FROM fixes").fetchone()
    assert origin != "engine"

    cache = CacheProposer(store)
    cached = regrow.repair(module.price, ("$12.5",), verify=_verify, proposers=[cache], install=False, timeout=60)
    assert cached.ok and cached.fix is not None and not cached.trusted
    assert not trusts(cache, cached.fix)
    # the label a candidate carries counts for nothing: not this cache's fix, not trusted
    assert not trusts(cache, Candidate(cached.fix.source + "\n", origin="engine"))

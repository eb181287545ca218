"""Proposers declare what they can do (regrow.extend.BaseProposer); regrow never probes their attributes."""

from __future__ import annotations

from collections.abc import Iterator

from regrow._proposers._proposer import stop_reason, trusts
from regrow.extend import BaseProposer, CacheProposer, Candidate, Engine, Request, Store


class Declares(BaseProposer):
    name = "declares"
    trusted = True

    @property
    def stop_reason(self) -> str:
        return "every edit judged"

    def propose(self, request: Request) -> Iterator[Candidate]:
        yield from ()


class Undeclared:
    """Looks trusted to a probe (``trusted``, ``trusts``, ``stop_reason``), but declares nothing."""

    name = "undeclared"
    trusted = True
    stop_reason = "probed"

    def trusts(self, candidate: Candidate) -> bool:
        return True

    def propose(self, request: Request) -> Iterator[Candidate]:
        yield from ()


def test_trust_and_stop_reason_are_what_a_proposer_declares(tmp_path) -> None:
    fix = Candidate("def f():\n    return 1\n", origin="engine")
    assert trusts(Declares(), fix) and stop_reason(Declares()) == "every edit judged"
    assert trusts(Engine(), fix)
    store = Store(tmp_path / "cache.db")
    try:
        assert not trusts(CacheProposer(store), fix)  # never offered by this cache: the store decides
    finally:
        store.close()


def test_a_proposer_that_declares_nothing_is_untrusted_whatever_its_attributes() -> None:
    fix = Candidate("def f():\n    return 1\n", origin="engine")
    assert not trusts(Undeclared(), fix)
    assert stop_reason(Undeclared()) == ""
    assert not trusts(BaseProposer(), fix)

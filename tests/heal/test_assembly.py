"""The one assembly of a repair (``regrow._heal._assembly``): policy, session, store, install, keep — and what it
changed for the front-ends that assembled a repair their own way before (issue 20)."""

from __future__ import annotations

import contextlib
import io
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from regrow._candidate import Candidate
from regrow._checks._oracles import Check, TestCallable
from regrow._cli._main import main
from regrow._evidence._failure import check_failure
from regrow._heal._assembly import RepairRequest, run_repair
from regrow._heal._options import make_options
from regrow._proposers._proposer import Request
from regrow._target._target import Target

BUGGY = '''\
def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return low
    return value
'''
TESTS = '''\
from clamp_assembly import clamp


def test_above():
    assert clamp(11, 0, 10) == 10


def test_inside():
    assert clamp(5, 0, 10) == 5
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "clamp_assembly.py").write_text(BUGGY, encoding="utf-8")
    (tmp_path / "test_clamp_assembly.py").write_text(TESTS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in ("clamp_assembly", "test_clamp_assembly"):
        sys.modules.pop(name, None)


def test_the_command_serves_a_fix_from_its_store_the_second_time(project: Path) -> None:
    # Before the one assembly, `regrow heal --store` recorded in the store but never read its cache
    # (only @heal and repair() put the cache proposer first); the agents' heals, which always have a store,
    # searched again for a failure they had fixed.
    store = project / "ledger.sqlite"
    argv = ["heal", "clamp_assembly.py::clamp", "--test", "test_clamp_assembly.py", "--store", str(store)]
    first, second = io.StringIO(), io.StringIO()
    assert main(argv, first) == 0, first.getvalue()
    assert main(argv, second) == 0, second.getvalue()
    with contextlib.closing(sqlite3.connect(store)) as db:
        hits = db.execute("SELECT hits FROM fixes").fetchall()
    assert hits == [(1,)]
    assert "+        return high" in second.getvalue()


def _crash(x: int) -> int:
    return 10 // x


class _Offers:
    """A proposer with one candidate; remembers that it was asked."""

    name = "offers"
    trusted = False

    def __init__(self, source: str) -> None:
        self.source, self.asked = source, 0

    def propose(self, request: Request) -> Iterator[Candidate]:
        self.asked += 1
        yield Candidate(self.source, origin="offers")


FIXED = "def _crash(x: int) -> int:\n    return 10 // x if x else 0\n"


def _request(proposer: _Offers, **fields: Any) -> RepairRequest:
    target = Target.of(_crash)
    failure = check_failure("test", _crash, "ZeroDivisionError")
    checks: tuple[Check, ...] = (TestCallable(lambda f: f(0) == 0 or (_ for _ in ()).throw(AssertionError())),)
    options = make_options(proposers=[proposer], sandbox="inprocess")
    return RepairRequest(target, failure, checks, options, oracle=True, install=False, **fields)


def test_a_request_that_cannot_be_replayed_runs_no_session() -> None:
    proposer = _Offers(FIXED)
    result = run_repair(_request(proposer, snapshot="refused: the arguments changed"))
    assert not result.ok and result.reason == "refused: the arguments changed"
    assert proposer.asked == 0


def test_keep_gets_the_fix_and_the_checks_it_was_proven_against() -> None:
    kept: list[tuple[str, int]] = []

    def keep(target: Target, result: Any, checks: Sequence[Check]) -> None:
        kept.append((result.fix.source, len(checks)))

    result = run_repair(_request(_Offers(FIXED), keep=keep))
    assert result.ok and kept == [(FIXED, 1)]
    assert _crash.__code__.co_consts == Target.of(_crash).func.__code__.co_consts  # install=False: untouched
    with pytest.raises(ZeroDivisionError):
        _crash(0)

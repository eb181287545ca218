"""No blind fixes without an oracle (issue 8), over two corpora of realistic functions.

- ``trust_corpus/deliberate.py``: a ``raise``/``assert`` in the user's own code is a decision.
  With no ``verify=``, ``tests=`` or ``record=``, ``repair()`` must return ``ok=False`` and leave
  the function alone, and ``@heal`` must let the original exception through.
- ``trust_corpus/crash.py``: a Python operation raising on an edge input. Those may be fixed
  without an oracle, but the fix must keep the original's result on every input where the
  original returned.

A repair installs its fix into the live function object, so every test loads the corpus module
afresh, under a name of its own registered in ``sys.modules`` (regrow reads the function's source
through its file and finds its module and owner class by name).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import itertools
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import regrow

_CORPUS = Path(__file__).parents[1] / "trust_corpus"
_serial = itertools.count()


def _load(kind: str) -> types.ModuleType:
    """A fresh copy of ``trust_corpus/<kind>.py``: new function objects, new exception classes."""
    name = f"trust_corpus_{kind}_{next(_serial)}"
    spec = importlib.util.spec_from_file_location(name, _CORPUS / f"{kind}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _unload(module: types.ModuleType) -> None:
    sys.modules.pop(module.__name__, None)


def _case(module: types.ModuleType, name: str) -> Any:
    found = [case for case in module.CASES if case.name == name]
    assert len(found) == 1, f"{len(found)} cases named {name!r} in {module.__file__}"
    return found[0]


def _names(kind: str) -> list[str]:
    module = _load(kind)
    try:
        return [case.name for case in module.CASES]
    finally:
        _unload(module)


DELIBERATE = _names("deliberate")
CRASH = _names("crash")


@pytest.fixture
def fresh() -> Iterator[Any]:
    """``fresh(kind)``: a freshly loaded corpus module, unregistered after the test."""
    loaded: list[types.ModuleType] = []

    def load(kind: str) -> types.ModuleType:
        module = _load(kind)
        loaded.append(module)
        return module

    yield load
    for module in loaded:
        _unload(module)


def _call(func: Any, args: tuple[Any, ...]) -> Any:
    return func(*copy.deepcopy(args))


def _outcome(func: Any, args: tuple[Any, ...]) -> str:
    """What a call did, as text: ``returned <repr>`` or ``raised <Type>: <message>``."""
    try:
        return f"returned {_call(func, args)!r}"
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"


def _changed(diff: str) -> str:
    lines = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return " | ".join(lines) if lines else "(no diff)"


# -- the corpora themselves ---------------------------------------------------------------------
def test_corpora_are_big_enough():
    assert len(DELIBERATE) >= 32 and len(set(DELIBERATE)) == len(DELIBERATE)
    assert len(CRASH) >= 22 and len(set(CRASH)) == len(CRASH)


def test_deliberate_corpus_is_sound(fresh):
    """Without regrow: every bad call raises its exception, every good call returns its result."""
    module = fresh("deliberate")
    for case in module.CASES:
        with pytest.raises(case.exc):
            _call(case.func, case.bad_args)
        for args, expected in case.good:
            assert _outcome(case.func, args) == f"returned {expected!r}", case.name


def test_crash_corpus_is_sound(fresh):
    """Without regrow: every bad call crashes with its exception, every returning call returns."""
    module = fresh("crash")
    for case in module.CASES:
        with pytest.raises(case.exc):
            _call(case.func, case.bad_args)
        assert len(case.returning) >= 4, case.name
        for args in case.returning:
            _call(case.func, args)  # raises if the corpus is wrong


# -- deliberate failures: never fixed without an oracle -----------------------------------------
@dataclasses.dataclass
class Deliberate:
    """What one no-oracle repair of a deliberate failure did."""

    name: str
    ok: bool
    installed: object
    reason: str
    diff: str
    error: str | None  # repair() itself raised
    code_unchanged: bool
    bad_call: str  # what the bad call does after the repair
    still_raises: bool  # with the same exception type
    good_mismatches: list[str]

    @property
    def blind_fix(self) -> bool:
        return self.ok or self.installed is not None or not self.code_unchanged

    def explain(self) -> str:
        if self.error is not None:
            return f"{self.name}: repair() raised {self.error}"
        return (f"{self.name}: ok={self.ok}, installed={self.installed}, code unchanged={self.code_unchanged}, "
                f"bad call now {self.bad_call}; fix: {_changed(self.diff)}")


_deliberate_outcomes: dict[str, Deliberate] = {}


def _repair_deliberate(name: str) -> Deliberate:
    """Repair the case on a fresh copy of the corpus, once per run (the aggregate test reuses it)."""
    if name in _deliberate_outcomes:
        return _deliberate_outcomes[name]
    module = _load("deliberate")
    try:
        case = _case(module, name)
        func = case.func
        before = func.__code__
        error = None
        try:
            result = regrow.repair(func, args=copy.deepcopy(case.bad_args), sandbox="fork")
            ok, installed, reason, diff = result.ok, result.installed, result.reason, result.diff
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            ok, installed, reason, diff = False, None, "", ""
        try:
            value = _call(func, case.bad_args)
            bad_call, still_raises = f"returned {value!r}", False
        except Exception as exc:
            bad_call, still_raises = f"raised {type(exc).__name__}: {exc}", type(exc) is case.exc
        mismatches = []
        for args, expected in case.good:
            shown = _outcome(func, args)
            if shown != f"returned {expected!r}":
                mismatches.append(f"{args!r}: expected {expected!r}, {shown}")
        outcome = Deliberate(name, ok, installed, reason, diff, error, func.__code__ is before, bad_call,
                             still_raises, mismatches)
    finally:
        _unload(module)
    _deliberate_outcomes[name] = outcome
    return outcome


@pytest.mark.parametrize("name", DELIBERATE)
def test_deliberate_failure_is_not_fixed(name):
    outcome = _repair_deliberate(name)
    assert outcome.error is None, outcome.explain()
    assert not outcome.ok, f"a deliberate raise was 'fixed' without an oracle: {outcome.explain()}"
    assert outcome.installed is None, outcome.explain()
    assert outcome.code_unchanged, f"the function's code was replaced: {outcome.explain()}"
    assert outcome.still_raises, f"the deliberate exception is gone: {outcome.explain()}"
    assert outcome.good_mismatches == [], outcome.explain()


def test_no_fix_is_installed_over_the_deliberate_corpus():
    outcomes = [_repair_deliberate(name) for name in DELIBERATE]
    offenders = [outcome for outcome in outcomes if outcome.blind_fix]
    assert len(offenders) == 0, (
        f"{len(offenders)} of {len(outcomes)} deliberate failures were 'fixed' without an oracle:\n"
        + "\n".join(outcome.explain() for outcome in offenders)
    )


HEAL_CASES = ["order_total", "post_ledger", "split_shares", "find_user", "isqrt_checked", "normalize_email",
              "config_int", "Shape.area", "Inventory.remaining_after"]


@pytest.mark.parametrize("name", HEAL_CASES)
def test_heal_lets_the_deliberate_exception_propagate(fresh, name):
    case = _case(fresh("deliberate"), name)
    healed = regrow.heal(case.func)
    before = case.func.__code__  # as decorated: @heal may hook the function's own code (regrow._heal._instrument)
    with pytest.raises(case.exc) as info:
        healed(*copy.deepcopy(case.bad_args))
    assert type(info.value) is case.exc, f"{name}: {type(info.value).__name__} instead of {case.exc.__name__}"
    assert case.func.__code__ is before, f"{name}: the function's code was replaced"
    for args, expected in case.good:
        assert healed(*copy.deepcopy(args)) == expected, name
    with pytest.raises(case.exc):  # and again: a later call is not healed either
        healed(*copy.deepcopy(case.bad_args))


# -- crash bugs: fixed, keeping every result the original returned ------------------------------
@pytest.mark.parametrize("name", CRASH)
def test_crash_is_fixed_and_keeps_the_original_results(fresh, name):
    pristine = _case(fresh("crash"), name)
    expected = [_outcome(pristine.func, args) for args in pristine.returning]
    assert all(shown.startswith("returned ") for shown in expected), expected  # the corpus says so

    case = _case(fresh("crash"), name)
    result = regrow.repair(case.func, args=copy.deepcopy(case.bad_args))
    assert result.ok, f"{name}: no fix found: {result.reason}"
    fix = _changed(result.diff)

    after = _outcome(case.func, case.bad_args)
    assert after.startswith("returned "), f"{name}: the failing call still {after}; fix: {fix}"
    mismatches = [
        f"{args!r}: original {want}, fixed {got}"
        for args, want in zip(case.returning, expected, strict=True)
        if (got := _outcome(case.func, args)) != want
    ]
    assert mismatches == [], f"{name}: the fix changes results where the original returned ({fix}):\n" + \
        "\n".join(mismatches)

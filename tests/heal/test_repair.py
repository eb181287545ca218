"""regrow.repair(): one call, no decorator."""

from __future__ import annotations

import pytest

import regrow


def test_repair_one_call(make_module):
    mod = make_module('''
        def mean(values):
            return sum(values) / (len(values) - 1)
    ''')

    def test_mean(fn):
        assert fn([2, 4]) == 3

    result = regrow.repair(mod.mean, args=([1, 2, 3],), tests=[test_mean])
    assert result.ok and result.value == 2
    assert result.fix is not None and result.fix.origin == "engine"
    assert "-    return sum(values) / (len(values) - 1)" in result.diff
    assert mod.mean([2, 4]) == 3  # installed


def test_repair_without_install_leaves_the_function(make_module):
    mod = make_module('''
        def inc(x):
            return x + 2
    ''')
    def test_inc(fn):
        assert fn(1) == 2 and fn(4) == 5  # one call alone admits x * 2 too: ambiguous

    result = regrow.repair(mod.inc, args=(1,), tests=[test_inc], install=False)
    assert result.ok and result.installed is None
    assert mod.inc(1) == 3


def test_nothing_to_repair(make_module):
    mod = make_module('''
        def inc(x):
            return x + 1
    ''')
    result = regrow.repair(mod.inc, args=(1,))
    assert result.ok and result.fix is None and result.value == 2 and "nothing to repair" in result.reason


def test_unrepairable_reports_why(make_module):
    mod = make_module('''
        def always(x):
            raise LookupError(x)
    ''')
    result = regrow.repair(mod.always, args=(1,), verify=lambda r: r == "unreachable", max_candidates=50)
    assert not result.ok and result.failure is not None and result.failure.exc_type == "LookupError"
    assert result.reason


def _impossible(fn):
    assert fn(2) == "zebra"


def _inverse(x):
    return 1 / (x - 2)


def test_repair_returns_a_result_when_no_fix_is_found_and_refuses_on_failure() -> None:
    impossible, inverse = _impossible, _inverse
    result = regrow.repair(inverse, args=(2,), tests=[impossible])
    assert not result.ok and result.fix is None and result.reason  # returned, not raised (docs/decorator.md)
    with pytest.raises(TypeError, match="on_failure"):  # was: "got multiple values for keyword argument"
        regrow.repair(inverse, args=(2,), tests=[impossible], on_failure="return_none")  # type: ignore[call-arg]


class _Box:
    def __init__(self, xs):
        self.xs = xs

    def top(self):
        return self.xs[len(self.xs)]


def test_repair_of_a_bound_method_calls_it_on_its_object() -> None:
    """``repair(box.top)`` dropped the object: it repaired the TypeError of a call without ``self``."""
    def check(fn):
        assert fn(_Box([1, 2, 3])) == 3
        assert fn(_Box([5])) == 5

    original = _Box.top.__code__
    try:
        result = regrow.repair(_Box([7, 8]).top, tests=[check])
        assert result.ok and result.value == 8, result.reason
        assert result.failure is not None and result.failure.exc_type == "IndexError"
        assert _Box([4, 6]).top() == 6  # installed into the class's function
    finally:
        _Box.top.__code__ = original


def test_the_run_for_the_folders_the_original_writes_gets_a_quarter_of_the_time_left(make_module, monkeypatch) -> None:
    """It had the whole candidate timeout, up to what was left: with a check that hangs on the original, ``regrow heal
    --timeout 20`` (10 s of it gone to running the tests on the original) left the search no time at all."""
    from regrow._session import _loop

    given: list[float] = []
    real = _loop.probe

    def probe(target, checks, sandbox, limits):
        given.append(limits.timeout)
        return real(target, checks, sandbox, limits)

    monkeypatch.setattr(_loop, "probe", probe)
    mod = make_module('''
        def test_price(fn):
            assert fn("$1") == 1.0

        def price(text):
            return float(text[2:])
    ''')
    result = regrow.repair(mod.price, args=("$1",), tests=[mod.test_price], timeout=8, candidate_timeout=10,
                           install=False)
    assert result.ok and len(given) == 1
    assert 0 < given[0] <= 8 / 4, given

"""regrow.repair(): one call, no decorator."""

from __future__ import annotations

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

"""request_healing(): the code says its own result is wrong, and the decorator repairs it like a failure."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Iterator

import pytest

import regrow
from regrow._candidate import Candidate
from regrow._evidence._request import dropped_requests, requests_in
from regrow._heal._ledger import ledger_of
from regrow._proposers._proposer import Request

MakeModule = Callable[[str], types.ModuleType]

SYNC = '''
import regrow

def test_total(fn):
    assert fn([1, 2, 3]) == 6

@regrow.heal(tests=[test_total], proposers=PROPOSERS)
def total(items):
    result = 0
    for x in items[1:]:
        result += x
    if result != sum(items):
        regrow.request_healing("the total is not the sum of the items", {"result": result, "count": len(items)})
    return result
'''


def _module(make_module: MakeModule, source: str, proposers: str = "None") -> types.ModuleType:
    return make_module(source.replace("PROPOSERS", proposers))


def test_a_request_is_repaired_like_a_failure_and_the_call_returns_the_fixed_result(make_module: MakeModule) -> None:
    mod = _module(make_module, SYNC)
    assert mod.total([5, 6]) == 11
    result = regrow.state(mod.total).last_result
    assert result is not None and result.ok and result.failure is not None
    failure = result.failure
    assert failure.kind == "requested" and failure.exc_type == "regrow.HealingRequested"
    assert failure.reason == "the total is not the sum of the items"
    assert failure.details == {"result": "6", "count": "2"}
    assert failure.locals["result"] == "6"  # the user's frame, not request_healing's
    assert "items[1:]" not in result.fix.source if result.fix else False
    assert mod.total([1, 1, 1]) == 3


def test_when_healing_fails_the_request_propagates_to_the_caller(make_module: MakeModule) -> None:
    mod = _module(make_module, SYNC, proposers="[]")
    with pytest.raises(regrow.HealingRequested) as raised:
        mod.total([5, 6])
    assert raised.value.reason == "the total is not the sum of the items"
    assert raised.value.details == {"result": 6, "count": 2}
    assert "could not repair" in ledger_of(raised.value)  # a note on 3.11+, an attribute on 3.10


def test_healing_disabled_lets_the_request_through(make_module: MakeModule) -> None:
    mod = _module(make_module, SYNC)
    regrow.disable()
    try:
        with pytest.raises(regrow.HealingRequested):
            mod.total([5, 6])
    finally:
        regrow.enable()
    assert regrow.state(mod.total).results == []


def test_async_functions_request_healing(make_module: MakeModule) -> None:
    mod = make_module('''
        import regrow

        def test_mean(fn):
            import asyncio
            assert asyncio.run(fn([2, 4])) == 3

        @regrow.heal(tests=[test_mean])
        async def mean(values):
            result = sum(values) / (len(values) + 1)
            if not min(values) <= result <= max(values):
                regrow.request_healing("the mean lies outside the values", {"mean": result})
            return result
    ''')
    assert asyncio.run(mod.mean([5, 5])) == 5
    result = regrow.state(mod.mean).last_result
    assert result is not None and result.ok and result.failure is not None
    assert result.failure.kind == "requested" and result.failure.locals["values"] == "[5, 5]"


def test_generators_request_healing_while_the_caller_iterates(make_module: MakeModule) -> None:
    mod = make_module('''
        import regrow

        def test_halves(fn):
            assert list(fn([2, 4])) == [1, 2]

        @regrow.heal(tests=[test_halves])
        def halves(values):
            for value in values:
                half = value // 3
                if half * 2 != value:
                    regrow.request_healing("a half times two is not the value", {"value": value})
                yield half
    ''')
    assert list(mod.halves([6, 8])) == [3, 4]
    result = regrow.state(mod.halves).last_result
    assert result is not None and result.ok and result.failure is not None
    assert result.failure.kind == "requested" and result.failure.locals["value"] == "6"


def test_methods_request_healing(make_module: MakeModule) -> None:
    mod = make_module('''
        import regrow

        def test_area(fn):
            assert fn(Box(2, 3)) == 6

        class Box:
            def __init__(self, width, height):
                self.width, self.height = width, height

            @regrow.heal(tests=[test_area])
            def area(self):
                result = self.width + self.height
                if result != self.width * self.height:
                    regrow.request_healing("the area is not width times height")
                return result
    ''')
    assert mod.Box(3, 4).area() == 12
    result = regrow.state(mod.Box.area).last_result
    assert result is not None and result.ok and result.failure is not None
    assert result.failure.kind == "requested" and result.failure.locals["result"] == "7"


class _Deleter:
    """Offers the one candidate that silences the request by deleting it."""

    name = "deleter"

    def propose(self, request: Request) -> Iterator[Candidate]:
        source = request.target.bare_source
        kept = [line for line in source.splitlines() if "request_healing" not in line and "if result !=" not in line]
        yield Candidate("\n".join(kept) + "\n", "deleter")


def test_a_candidate_that_deletes_the_request_is_refused(make_module: MakeModule) -> None:
    mod = make_module(SYNC.replace("@regrow.heal(tests=[test_total], proposers=PROPOSERS)\n", ""))
    healed = regrow.heal(tests=[mod.test_total], proposers=[_Deleter()])(mod.total)
    with pytest.raises(regrow.HealingRequested):
        healed([5, 6])
    result = regrow.state(healed).last_result
    assert result is not None and not result.ok
    (attempt,) = result.history
    assert attempt.verdict.check == "rails" and "request_healing() calls" in attempt.verdict.reason


def test_request_healing_needs_a_reason() -> None:
    with pytest.raises(TypeError):
        regrow.request_healing("  ")
    with pytest.raises(regrow.HealingRequested) as raised:
        regrow.request_healing("wrong", {"n": 1})
    assert str(raised.value) == "wrong" and raised.value.details == {"n": 1}


def test_requests_are_counted_by_name() -> None:
    source = "def f(x):\n    if x:\n        regrow.request_healing('a')\n    request_healing('b')\n    return x\n"
    assert requests_in(source) == 2
    assert dropped_requests(source, "def f(x):\n    request_healing('b')\n    return x\n") is not None
    assert dropped_requests(source, source.replace("if x:", "if x > 1:")) is None
    assert dropped_requests("def f(x):\n    return x\n", "def f(x):\n    return 1\n") is None


def test_the_request_is_typed() -> None:
    assert issubclass(regrow.HealingRequested, Exception)
    assert isinstance(regrow.request_healing, types.FunctionType)

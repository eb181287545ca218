"""Generators under @heal are instrumented like functions: caught in their own frame, the same object, the
user's tracebacks; after a fix the caller's iteration goes on with the rest of the fixed generator."""

from __future__ import annotations

import asyncio
import inspect
import pickle
import sys
import traceback
from typing import Any

import pytest

import regrow
from regrow._heal._generators import replay
from regrow._heal._instrument_bytes import body_of, resumed

GENERATORS = '''
import regrow

@regrow.heal(proposers=[], cooldown=60)
def numbers(n, step=1):
    total = 0
    for i in range(n):
        total += i
        yield i * step
    return total

@regrow.heal(proposers=[], cooldown=60)
def failing(n):
    for i in range(n):
        yield 10 // (i - 2)  # the failing line

def plain_failing(n):
    for i in range(n):
        yield 10 // (i - 2)

@regrow.heal(proposers=[], cooldown=60)
def careful(events):
    try:
        yield 1
        yield 2
    except ValueError as exc:
        events.append(f"caught {exc}")
        yield "handled"
    finally:
        events.append("closed")

@regrow.heal(proposers=[], cooldown=60)
async def counting(n):
    for i in range(n):
        yield i
'''


def test_a_generator_is_instrumented_and_stays_the_same_object(make_module):
    mod = make_module(GENERATORS)
    before = mod.numbers
    assert regrow.state(mod.numbers).mode == regrow.state(mod.counting).mode == "instrumented"
    assert regrow.state(mod.numbers).func is mod.numbers is before
    assert inspect.isgeneratorfunction(mod.numbers) and inspect.isasyncgenfunction(mod.counting)
    assert str(inspect.signature(mod.numbers)) == "(n, step=1)"
    assert pickle.loads(pickle.dumps(mod.numbers)) is mod.numbers  # by reference
    assert list(mod.numbers(4, step=2)) == [0, 2, 4, 6]
    items = mod.numbers(3)
    assert next(items) == 0 and items.send("ignored") == 1
    with pytest.raises(StopIteration) as done:
        next(items), next(items)
    assert done.value.value == 3  # the generator's return value reaches its caller

    async def collect() -> list[Any]:
        return [x async for x in mod.counting(3)]

    assert asyncio.run(collect()) == [0, 1, 2]


def test_a_failure_is_caught_in_the_generators_own_frame_with_the_users_traceback(make_module):
    mod = make_module(GENERATORS)
    with pytest.raises(ZeroDivisionError) as healed:
        list(mod.failing(4))
    with pytest.raises(ZeroDivisionError) as plain:
        list(mod.plain_failing(4))
    frames = traceback.extract_tb(healed.value.__traceback__)
    assert (frames[-1].filename, frames[-1].name) == (mod.__file__, "failing")
    assert frames[-1].line == "yield 10 // (i - 2)  # the failing line"
    assert len(frames) == len(traceback.extract_tb(plain.value.__traceback__))  # no wrapper frame
    assert regrow.state(mod.failing).tally.failures == 1  # handed to regrow (no proposer: no fix)


def test_what_the_caller_throws_in_or_closing_is_not_a_failure(make_module):
    mod = make_module(GENERATORS)
    events: list[str] = []
    items = mod.careful(events)
    assert next(items) == 1
    assert items.throw(ValueError("from the caller")) == "handled"  # the user's own except sees it
    items.close()
    assert events == ["caught from the caller", "closed"]
    items = mod.careful(events)
    next(items)
    with pytest.raises(KeyError):
        items.throw(KeyError("not handled by the body"))
    assert regrow.state(mod.careful).tally.failures == 0  # neither was handed to regrow


def test_the_caller_gets_the_rest_of_the_fixed_generator(make_module):
    mod = make_module('''
        import regrow

        def test_countdown(fn):
            assert list(fn(3)) == [3, 2, 1]

        @regrow.heal(tests=[test_countdown])
        def countdown(n):
            for i in range(n):
                yield n - i if i < 2 else 10 // (i - 2)  # bug: the third item divides by zero
    ''')
    before = mod.countdown
    assert regrow.state(mod.countdown).mode == "instrumented"
    items = mod.countdown(3)
    assert next(items) == 3 and next(items) == 2
    assert list(items) == [1]  # the fixed generator, after the two items already delivered
    state = regrow.state(mod.countdown)
    assert state.last_result is not None and state.last_result.installed == "code"
    assert mod.countdown is before and state.hook is not None and before.__code__ is state.hook.code
    assert list(before(3)) == [3, 2, 1]  # the fix runs, hooked


def test_an_async_generator_is_healed_in_its_own_frame(make_module):
    mod = make_module('''
        import asyncio
        import regrow

        def test_doubles(fn):
            async def collect():
                return [x async for x in fn(3)]
            assert asyncio.run(collect()) == [0, 2, 4]

        @regrow.heal(tests=[test_doubles])
        async def doubles(n):
            for i in range(n):
                await asyncio.sleep(0)
                yield i * 2 + None  # bug
    ''')
    assert regrow.state(mod.doubles).mode == "instrumented"

    async def collect() -> list[Any]:
        return [x async for x in mod.doubles(2)]

    assert asyncio.run(collect()) == [0, 2]
    assert regrow.state(mod.doubles).last_result.ok


def _items(values: list[Any], fail_at: int | None = None) -> Any:
    for index, value in enumerate(values):
        if index == fail_at:
            raise ValueError("failed")
        yield value


def test_replay_finds_the_items_delivered_by_running_the_old_code_again():
    exc = ValueError("the caller's failure")
    assert list(replay(_items([1, 2, 3, 4]), _items([1, 2, 9], fail_at=2), exc)) == [3, 4]
    with pytest.raises(ValueError) as differ:
        list(replay(_items([1, 5, 3]), _items([1, 2, 9], fail_at=2), exc))
    assert "its first items differ" in regrow.ledger_of(differ.value)
    untold = ValueError("not again")
    with pytest.raises(ValueError) as again:
        list(replay(_items([1, 2, 3]), _items([1, 2, 3]), untold))  # the old code did not fail this time
    assert "did not fail again" in regrow.ledger_of(again.value)
    endless = ValueError("endless")
    with pytest.raises(ValueError) as bounded:
        list(replay(iter(range(10**9)), iter(range(10**9)), endless, limit=50))
    assert "within 50 items" in regrow.ledger_of(bounded.value)


def test_a_generator_with_no_source_is_made_from_its_bytes_else_wrapped():
    namespace: dict[str, Any] = {"regrow": regrow}
    exec(compile("def gen(n):\n    yield from range(n)\n", "/nonexistent/made.py", "exec"), namespace)
    healed = regrow.heal(namespace["gen"])
    if (3, 11) <= sys.version_info[:2] <= (3, 13):  # made from its running bytes: no source needed (_instrument_splice)
        assert regrow.state(healed).mode == "instrumented" and healed is namespace["gen"]
    else:
        assert regrow.state(healed).mode == "wrapped" and healed is not namespace["gen"]
    assert list(healed(3)) == [0, 1, 2]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 enters a try with SETUP_FINALLY: one more instruction")
def test_a_healthy_generator_runs_its_own_bytecode(make_module):
    mod = make_module(GENERATORS)
    hook = regrow.state(mod.numbers).hook
    assert hook is not None and hook.plain is not None
    body = body_of(hook.plain)  # 3.12+: but for the epilogue, which comes after the handler
    made = mod.numbers.__code__.co_code[:len(body)]
    assert resumed(made, hook.plain) == resumed(body, hook.plain)  # the body byte for byte, then the handler
    if sys.version_info < (3, 12):  # 3.12+: each yield also says how many try blocks stand around it
        assert made == body


def test_a_tracer_sees_only_the_users_lines_of_a_generator(make_module):
    mod = make_module(GENERATORS)
    seen: list[tuple[str, int | None]] = []

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is mod.numbers.__code__:
            seen.append((event, frame.f_lineno))
        return tracer

    sys.settrace(tracer)
    try:
        assert list(mod.numbers(1)) == [0]
    finally:
        sys.settrace(None)
    lines = {line for event, line in seen if event == "line"}
    assert lines == {6, 7, 8, 9, 10}  # the body's lines only: nothing on the `def` line (5) while healthy


def test_a_context_manager_generator_runs_its_own_cleanup(make_module):
    mod = make_module('''
        import contextlib
        import regrow

        EVENTS = []

        @contextlib.contextmanager
        @regrow.heal(proposers=[], cooldown=60)
        def opened(name):
            EVENTS.append(f"open {name}")
            try:
                yield name
            finally:
                EVENTS.append(f"close {name}")
    ''')
    with pytest.raises(KeyError), mod.opened("a"):
        raise KeyError("raised in the with block")
    assert mod.EVENTS == ["open a", "close a"]  # thrown in at the yield: the body's finally ran
    assert regrow.state(mod.opened.__wrapped__).tally.failures == 0  # the caller's error, not the function's

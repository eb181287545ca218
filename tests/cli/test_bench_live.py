"""The bench's judge on methods: receivers that cannot be pickled, their state after the call, and
receivers the tests built but never checked the method on (see ``regrow._cli._bench._live``)."""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from regrow._checks._oracles import TestCallable
from regrow._cli._bench._judge import jobs, judge
from regrow._cli._bench._live import live_job
from regrow._cli._bench._state import copyable, fresh, render
from regrow._sandbox._warm import Worker
from regrow._target._target import Target

TALLY = """
import threading


class Tally:
    def __init__(self, step=1):
        self.step = step
        self.total = 0
        self.lock = threading.Lock()  # no recorded call can carry a Tally: it cannot be pickled

    def add(self, n):
        with self.lock:
            self.total += n
        return self.total

    def window(self, n):
        for at in range(self.total):
            if at % n == 0:
                yield at
"""

ADD = """
def add(self, n):
    with self.lock:
        self.total += n * self.step
    return self.total
"""

WINDOW = """
def window(self, n):
    for at in range(self.total):
        if at % n == 0:
            yield at * self.step
"""


def checks(module: types.ModuleType) -> list[TestCallable]:
    """Tests that call ``add`` on counters of step 1 only; a counter of step 3 is built, and added 0 to."""

    def test_add(fn: object) -> None:
        assert module.Tally().add(2) == 2
        assert module.Tally().add(4) == 4
        assert module.Tally(step=3).add(0) == 0  # the step is never seen to matter

    def test_window(fn: object) -> None:
        tally = module.Tally()
        tally.total = 3
        assert list(tally.window(5)) == [0]

    return [TestCallable(test_add), TestCallable(test_window)]


@pytest.fixture
def judging(make_module: Callable[[str], types.ModuleType]) -> Iterator[Callable[..., dict[str, Any]]]:
    module = make_module(TALLY)
    workers: dict[str, Worker] = {}

    def verdict(method: str, fix: str, min_calls: int = 10) -> dict[str, Any]:
        if method not in workers:
            target = Target.of(getattr(module.Tally, method))
            reference = ADD if method == "add" else WINDOW
            workers[method] = stack.enter_context(Worker({**jobs(target, target.compile(reference)),
                                                          "live": live_job(target, reference, checks(module))}))
        return judge(workers[method], fix, [], min_calls=min_calls, budget=20.0)

    with contextlib.ExitStack() as stack:
        yield verdict


def test_a_method_of_an_object_no_call_can_carry_is_judged_correct(judging: Any) -> None:
    verdict = judging("add", "def add(self, n):\n    with self.lock:\n        self.total = self.total + n * self.step\n"
                             "    return self.total\n")
    assert verdict["status"] == "correct" and verdict["judged_calls"] >= 10
    live = verdict["inputs"]["live"]
    assert verdict["inputs"]["given"] == 0 and live["in_tests"] >= 3 and live["crossed"] > 0


def test_a_fix_wrong_only_on_a_receiver_the_tests_never_check_is_wrong(judging: Any) -> None:
    # The buggy original's fix: passes every test, ignores the step (only a Tally(step=3) shows it).
    verdict = judging("add", "def add(self, n):\n    with self.lock:\n        self.total += n\n    return self.total\n")
    assert verdict["status"] == "wrong"
    assert "step=3" in verdict["counterexample"] or "Tally(" in verdict["counterexample"]


def test_a_fix_wrong_only_in_the_state_it_leaves_is_wrong(judging: Any) -> None:
    # Returns what the reference returns, and forgets to keep it: only the receiver after the call shows it.
    verdict = judging("add", "def add(self, n):\n    return self.total + n * self.step\n")
    assert verdict["status"] == "wrong" and "after:" in verdict["counterexample"]


def test_a_generator_is_judged_on_its_items(judging: Any) -> None:
    # window(5) of a total of 3 is [0] either way; window(1) shows the extra item.
    verdict = judging("window", "def window(self, n):\n    for at in range(self.total + 1):\n        if at % n == 0:\n"
                                "            yield at * self.step\n")
    assert verdict["status"] == "wrong" and "items" in verdict["counterexample"]
    assert judging("window", WINDOW)["status"] == "correct"


def test_too_few_calls_leave_the_fix_unjudged_and_say_why(judging: Any) -> None:
    verdict = judging("window", WINDOW, min_calls=10_000)
    assert verdict["status"] == "unjudged" and verdict["correct"] is None
    assert "fewer than the 10000 a judgement needs; of the calls made while the tests ran, left out: none" \
        in verdict["reason"]


def test_state_is_written_out_without_addresses_or_cycles() -> None:
    class Node:
        def __init__(self) -> None:
            self.items = [1, "a"]
            self.me = self
            self.lock = threading.Lock()

    text = render(Node())
    assert text.startswith("test_state_is_written_out_without_addresses_or_cycles.<locals>.Node(items=[1, 'a']")
    assert "me=<cycle>" in text and " at 0x" not in text
    assert render({1: (2, 3)}) == "{1: (2, 3)}" and render({3, 1}) == "{1, 3}"
    with copyable():  # a lock copies as a new lock while judging
        node = Node()
        copied = fresh(((node,), {}))[0][0]
        assert copied is not node and copied.lock is not node.lock and copied.me is copied


class _ByName:
    """Pickles by name, as functions and decorator wrappers do: a deep copy would be the object itself."""

    def __init__(self) -> None:
        self.cache: dict[int, int] = {}

    def __reduce__(self) -> str:
        return "_ByName"


def test_an_object_that_copies_as_itself_is_copied_by_its_state() -> None:
    wrapper = _ByName()
    (copied,), _ = fresh(((wrapper,), {}))
    assert type(copied) is _ByName and copied is not wrapper and copied.cache is not wrapper.cache

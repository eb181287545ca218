"""The engine's edits made in search order as the search reads them (issue 26): the same order a sort of every
edit gives, a first edit that does not wait for the last, and a walk that stops at the deadline."""

from __future__ import annotations

import ast
import dataclasses
import os
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

import regrow
from regrow._proposers._engine._operators import OPERATORS
from regrow._proposers._engine._plan import Stats
from regrow._proposers._engine._ranked import Edit, Ranked
from regrow._proposers._engine._scope import Scope, Site

SMALL = textwrap.dedent('''
    def tally(values, limit):
        total = 0
        for value in values:
            if value > limit:
                total += value - limit
            else:
                total -= 1
        return total
''')


def _scope(source: str) -> Scope:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return Scope.of(function)


def _weight(site: Site) -> float:
    return float(site.line % 3)  # three levels of suspicion, ties among sites and operators


def _shown(value: Any) -> Any:
    if isinstance(value, ast.AST):
        return ast.dump(value)
    if isinstance(value, list):
        return [_shown(item) for item in value]
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, *(_shown(getattr(value, f.name)) for f in dataclasses.fields(value)))
    return repr(value)


def _described(edit: Edit) -> tuple[Any, ...]:
    return (edit.key, edit.op.name, edit.site.order, _shown(edit.new))


def test_the_walk_gives_the_order_a_sort_of_every_edit_gives() -> None:
    scope = _scope(SMALL)
    every = [Edit((op.tier, -_weight(site), op.prior, site.order, k), op, site, new)
             for site in scope.sites for op in OPERATORS for k, new in enumerate(op.edits(site, scope))]
    every.sort()
    ranked = Ranked(scope, OPERATORS, _weight)
    walked = list(ranked)
    assert len(walked) == len(every) > 100 and ranked.done and not ranked.overdue
    assert [_described(edit) for edit in walked] == [_described(edit) for edit in every]
    assert [edit.index for edit in walked] == list(range(len(walked)))


def _long(lines: int) -> str:
    body = [f"    v{n} = values[{n % 5}] * {n % 7 + 1} + limit" for n in range(lines)]
    return "def crunch(values, limit):\n    total = 0\n" + "\n".join(body) + "\n    return total\n"


def test_the_first_edits_of_a_long_function_are_made_without_the_rest() -> None:
    scope = _scope(_long(400))  # every edit of it: millions (statements copied and renamed to every place)
    ranked = Ranked(scope, OPERATORS, _weight)
    first = ranked[99]
    assert len(ranked) == 100 and not ranked.done and first.index == 99 and first.op.tier == 1


class Clock:
    """A clock that reads 0 for ``ticks`` readings, then 1: when the walk reads it is what is tested."""

    def __init__(self, ticks: int) -> None:
        self.ticks, self.readings = ticks, 0

    def __call__(self) -> float:
        self.readings += 1
        return 0.0 if self.readings <= self.ticks else 1.0


def test_a_walk_in_search_order_stops_at_the_deadline_and_says_so() -> None:
    scope, stats, clock, told = _scope(_long(200)), Stats(), Clock(5000), []
    ranked = Ranked(scope, OPERATORS, _weight, deadline=0.5, clock=clock, stats=stats, progress=told.append)
    walked = list(ranked)
    assert ranked.overdue and not ranked.done and 0 < len(walked) <= 5000
    assert clock.readings > len(walked)  # read before every edit and between sites, not once per plan
    assert "time budget" in stats.stopped and stats.edits == len(walked)
    assert told and told[0].startswith("planning: core edits at")
    # A worker forked with the plan asks for an edit by its place: made without the deadline, the same edit.
    again = Ranked(scope, OPERATORS, _weight)
    assert _described(ranked[len(walked) + 5]) == _described(again[len(walked) + 5])


def test_sites_with_nothing_to_offer_do_not_outlast_the_deadline() -> None:
    scope, clock = _scope(_long(300)), Clock(50)
    nothing = [op for op in OPERATORS if op.name == "return-dropped"]  # an operator no site here has an edit for
    ranked = Ranked(scope, nothing, _weight, deadline=0.5, clock=clock)
    assert list(ranked) == [] and ranked.overdue and clock.readings < 60  # stopped within a few sites


def test_a_long_function_under_a_tiny_deadline_ends_with_the_time_budget(
        make_module: Callable[[str], Any]) -> None:
    lines = "\n".join(f"    v{n} = values[{n % 5}] * {n % 7 + 1} + limit" for n in range(600))
    mod = make_module(f"def crunch(values, limit):\n    total = 0\n{lines}\n    return total + 1\n")

    def test_crunch(fn: Callable[..., int]) -> None:
        assert fn([1, 2, 3, 4, 5], 2) == 0

    events: list[regrow.Event] = []
    result = regrow.repair(mod.crunch, args=([1, 2, 3, 4, 5], 2), tests=[test_crunch], install=False,
                           timeout=3.0, on_event=events.append)
    assert not result.ok
    assert "time budget" in result.reason or result.candidates > 0, result.reason
    assert any(event.type == "progress" and event.message.startswith("planning") for event in events)


def test_a_forked_copy_of_the_walk_tells_no_one() -> None:
    told: list[str] = []
    ranked = Ranked(_scope(SMALL), OPERATORS, _weight, progress=told.append)
    read, write = os.pipe()
    with warnings.catch_warnings():  # 3.12+ warns about a fork in a process with threads; the child only walks
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # a judging child: it makes edits from its copy, and the host's handlers hear nothing of it
        try:
            list(ranked)
            os.write(write, str(len(told)).encode())
        finally:
            os._exit(0)
    os.close(write)
    heard = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert heard == b"0" and told == []
    list(ranked)
    assert len(told) == 4  # one line per tier, in the host

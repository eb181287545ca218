"""The texts of the candidates the engine screens in its worker travel only to those who read them.

Making a failing candidate's text and sending it back costs about a tenth of judging a quick one on real
suites (issue 24); only a user's event handler (a display) and a later proposer (a model told what the
engine tried) read it. A passing candidate always carries its text: it is what the session proves."""

from __future__ import annotations

import time
from collections.abc import Iterator

import regrow
import regrow.extend
from regrow._checks._oracles import TestCallable
from regrow._evidence._failure import check_failure
from regrow._proposers._engine import Engine
from regrow._proposers._proposer import Request
from regrow._target._target import Target


def buggy_total(xs):
    total = 0
    for x in xs:
        total -= x
    return total


def check_total(fn):
    assert fn([1, 2, 3]) == 6


def check_empty(fn):
    assert fn([]) == 0


class Asks:
    """Offers nothing; keeps what each request said about the screened candidates' texts."""

    name = "asks"

    def __init__(self) -> None:
        self.texts: list[bool] = []

    def propose(self, request: regrow.extend.Request) -> Iterator[regrow.Candidate]:
        self.texts.append(request.screen_texts)
        yield from ()


def test_a_request_wants_screened_texts_only_where_a_handler_or_a_later_proposer_reads_them() -> None:
    alone, first, last, watched = Asks(), Asks(), Asks(), Asks()
    for proposers, handlers in (([alone], ()), ([first, last], ()), ([watched], (lambda event: None,))):
        result = regrow.repair(buggy_total, ([1, 2, 3],), tests=[check_total], proposers=proposers, on_event=handlers)
        assert not result.ok
    assert alone.texts == [False]
    assert first.texts == [True] and last.texts == [False]
    assert watched.texts == [True]


def test_the_engines_failing_candidates_carry_their_text_only_when_asked() -> None:
    verdicts: dict[bool, list[tuple[bool, str]]] = {}
    for wanted in (False, True):
        events: list[regrow.Event] = []
        target = Target.of(buggy_total)
        request = Request(target, check_failure("test", target.func, "failing"), [],
                          [TestCallable(check_total), TestCallable(check_empty)], 1, time.monotonic() + 60,
                          events=(events.append,), screen_texts=wanted)
        fixes = list(Engine(jobs=1).propose(request))
        assert fixes and "total += x" in fixes[0].source
        verdicts[wanted] = [(event.verdict.ok, event.candidate.source) for event in events
                            if event.type == "verdict" and event.verdict is not None and event.candidate is not None]
    for wanted, seen in verdicts.items():
        failed = [source for ok, source in seen if not ok]
        assert failed and all(source for ok, source in seen if ok)  # what passed always has its text
        assert all(failed) if wanted else not any(failed)
    assert len(verdicts[False]) == len(verdicts[True])  # the same search either way

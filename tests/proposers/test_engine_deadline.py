"""The search's deadline holds while it waits for a verdict (issue 26): a batch of long candidates, or of
mutants that loop, does not keep it waiting to the batch's own time limit."""

from __future__ import annotations

import os
import time

import pytest

from regrow._proposers._engine._judges import Judges
from regrow._sandbox._warm import Worker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="pipelined jobs need fork")


def looped(xs: list[int]) -> list[int]:
    while True:
        pass


def squares(xs: list[int]) -> list[int]:
    return [x * x for x in xs]


def test_a_verdict_not_in_by_the_deadline_is_not_waited_for() -> None:
    with Judges(Worker({"loop": looped, "squares": squares}), 2) as judges:
        verdicts = judges.verdicts(range(8), lambda worker, group: worker.send("loop", group, timeout=120),
                                   lambda n, outcome: outcome, batch=2, deadline=time.monotonic() + 0.5)
        assert list(verdicts) == []  # not the jobs' own time limit (120 s), and no verdict made up
        assert verdicts.expired
        assert all(worker.busy == 0 for worker in judges.workers)  # the looping workers were renewed
        assert [worker.call("squares", [3], timeout=30) for worker in judges.workers] == [("ok", [9])] * 2


def test_verdicts_in_before_the_deadline_come_back_in_order() -> None:
    with Judges(Worker({"squares": squares}), 2) as judges:
        verdicts = judges.verdicts(range(6), lambda worker, group: worker.send("squares", group, timeout=30),
                                   lambda n, outcome: outcome[1], batch=2, deadline=time.monotonic() + 600)
        assert list(verdicts) == [(n, n * n) for n in range(6)]
        assert not verdicts.expired

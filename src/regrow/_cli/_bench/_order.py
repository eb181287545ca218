"""Tests that change their verdict between identical runs: flaky, or reading state another test left?

A warm worker runs the tests again and again in one process, so a test that passes alone can fail
once another test has mutated shared module state (a registry, a cache, a counter) — and pass again
in a fresh process. That is not flakiness, and calling it so would refuse a task for nothing. Each
suspect is run alone, twice, each time in a fresh child: if it still disagrees with itself it is
flaky; if not, the tests before it (each in a fresh child, followed by the suspect) show which one
changed the state it reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..._checks._oracles import Check
from ..._checks._spectrum import Run
from ..._sandbox._warm import Worker

_POLLUTER_LIMIT = 30  # tests tried as the one that changed the state, at most
_GRACE = 0.5


@dataclasses.dataclass
class Order:
    """What re-running the suspects in fresh processes showed."""

    flaky: list[str]  # tests that disagree with themselves even in a fresh process
    changed_by: dict[str, str]  # test whose verdict depends on the state another test left -> that test

    def describe(self) -> str:
        parts = [f"{suspect} reads state that {other} changed" for suspect, other in self.changed_by.items()]
        return "; ".join(parts)


def _fresh_verdicts(worker: Worker, indices: Sequence[int], timeout: float) -> list[bool]:
    """Whether each check (by index) passed, run in this order in a fresh child (killed or crashed: failed)."""
    worker.renew()
    verdicts = []
    for index in indices:
        status, run = worker.call("trace", index, timeout=timeout + _GRACE, read=Run.from_plain)
        verdicts.append(status == "ok" and isinstance(run, Run) and run.passed)
    worker.renew()
    return verdicts


def order_dependence(checks: Sequence[Check], worker: Worker, changed: Sequence[str], timeout: float) -> Order:
    """Which of the ``changed`` tests are flaky, and which read state another test changed."""
    names = [check.name for check in checks]
    order = Order([], {})
    for suspect in changed:
        if suspect not in names:
            continue
        at = names.index(suspect)
        alone = [_fresh_verdicts(worker, [at], timeout)[0] for _ in range(2)]
        if alone[0] != alone[1]:
            order.flaky.append(suspect)
            continue
        # itself first: a test that mutates what it reads fails on its own second run
        others = [at, *(i for i in range(len(checks)) if i != at)][:_POLLUTER_LIMIT]
        for other in others:
            after = _fresh_verdicts(worker, [other, at], timeout)[-1]
            if after != alone[0]:
                if other == at:  # its verdict depends on how often it ran: no process state makes it an oracle
                    order.flaky.append(suspect)
                else:
                    order.changed_by[suspect] = names[other]
                break
        else:
            order.flaky.append(suspect)  # no single test explains it: treat it as flaky
    return order

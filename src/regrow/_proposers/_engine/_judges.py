"""Candidates judged in several warm workers at once, their verdicts taken in search order.

Each worker is a child forked from this process (see :mod:`._worker`), so N workers judge N
candidates at the same time on N cores. The search stays deterministic: candidates are handed out
in search order and their verdicts are read back in that same order, whatever finished first, so
the search decides (counts its budget, finds its first plausible candidate, stops) exactly as one
worker would. What runs ahead of that order is speculation: a verdict the search no longer wants
(it stopped, or changed what it looks for with :meth:`Verdicts.restart`) is dropped unread.

One host thread drives every worker: it keeps two jobs in each child's pipe, so a child starts its
next candidate the moment it answers one, and waits on all their pipes at once. The host does
little per candidate (the workers make the candidates' text too, see :mod:`._plan`), so it keeps
N children busy on N cores. Where there is no ``fork`` (the in-process fallback has one live
function to swap), candidates are judged one at a time in this process.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import os
import select
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ..._checks._oracles import Check
from ..._checks._spectrum import Spectrum
from ..._sandbox._warm import Worker

T = TypeVar("T")
V = TypeVar("V")

# Jobs handed out ahead of the verdict the search waits for, per worker: the other workers go on while
# the head candidate runs to its time limit (a mutant that loops), instead of idling after a few jobs.
# What ran ahead is only lost at a restart, and it ran on a core that would have been idle.
_AHEAD = 64
_CLOSE_WAIT = 0.1  # seconds close() waits for the jobs in the pipes; a worker still busy then is renewed


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def failing_first(checks: Sequence[Check], spectrum: Spectrum | None) -> None:
    """Order each test suite's tests for judging: those that failed on the original first (a candidate
    that is no fix fails there, at once, before the slow passing tests of an exponential original run),
    the passing ones after them in the suite's own order. Passing tests are not sorted by speed: a
    suite whose tests read state earlier ones left passes only in its own order."""
    if spectrum is None:
        return
    cost = {run.check: (-1.0 if not run.passed else 0.0) for run in spectrum.runs}
    for check in checks:
        check.prefer(cost)


class Judges:
    """``count`` workers with the jobs of ``first`` (which is one of them, and the one for everything
    but judging: tracing, ranking)."""

    def __init__(self, first: Worker, count: int) -> None:
        count = max(1, count) if first.forking else 1
        self.first = first
        self.workers = [first, *(Worker(first.jobs, fork=True, trusted=first.trusted, fresh=first.fresh,
                                        views=first.views, environ=first.environ)
                                 for _ in range(count - 1))]

    @property
    def forks(self) -> int:
        return sum(worker.forks for worker in self.workers)

    def verdicts(self, items: Iterable[T], send: Callable[[Worker, list[T]], None],
                 settle: Callable[[T, tuple[str, Any]], V], batch: int = 1,
                 again: Callable[[Worker, list[T]], None] | None = None,
                 deadline: float | None = None) -> Verdicts[T, V]:
        """``(item, settle(item, outcome))`` for each item, in the order of ``items``, until ``deadline``
        (``time.monotonic()``): a verdict not in by then is not waited for (``expired`` says so).

        ``send(worker, group)`` hands a group of up to ``batch`` items to a worker as one job, whose
        result is a list of one value per item; each item's ``outcome`` is ``("ok", its value)``. A
        job that ends otherwise (timeout, crash, refusal, error) tells nothing of which item caused
        it: its items are sent again one by one (with ``again``, if given, else ``send``), and each
        gets the outcome of its own job.
        """
        return Verdicts(self.workers, items, send, settle, batch, again, deadline)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclasses.dataclass
class _Slot(Generic[T]):
    item: T
    outcome: tuple[str, Any] | None = None


_Group = list[_Slot[T]]  # the items of one job


class Verdicts(Generic[T, V]):
    """The verdicts of :meth:`Judges.verdicts`, an iterator; :meth:`restart` swaps the items still to come."""

    def __init__(self, workers: list[Worker], items: Iterable[T], send: Callable[[Worker, list[T]], None],
                 settle: Callable[[T, tuple[str, Any]], V], batch: int = 1,
                 again: Callable[[Worker, list[T]], None] | None = None, deadline: float | None = None) -> None:
        self._workers = workers
        self._deadline = deadline
        self.expired = False  # the deadline came while a verdict was awaited: the iteration ended there
        self._items: Iterator[T] = iter(items)
        self._send, self._settle, self._again = send, settle, again or send
        self._batch = max(1, batch) if all(worker.depth > 1 for worker in workers) else 1
        self._window = _AHEAD * len(workers) * self._batch
        self._pending: collections.deque[_Slot[T]] = collections.deque()  # handed out and wanted, in order
        self._queues: list[collections.deque[_Group[T]]] = [collections.deque() for _ in workers]  # per worker
        self._exhausted = False

    def __iter__(self) -> Verdicts[T, V]:
        return self

    def __next__(self) -> tuple[T, V]:
        self._fill()
        while not self._pending:
            if self._exhausted:
                self.close()
                raise StopIteration
            self._expire()
            self._wait(self._deadline)  # every worker is busy with what was dropped at a restart
            self._fill()
        head = self._pending[0]
        while head.outcome is None:
            self._expire()
            self._wait(self._deadline)
            self._fill()  # a worker that answered ahead of the head gets its next job now
        self._pending.popleft()
        self._fill()  # the workers go on while the caller looks at this verdict
        return head.item, self._settle(head.item, head.outcome)

    def _expire(self) -> None:
        """End the iteration if the deadline came: a batch of long candidates (a 3,000-line function
        compiles in ~0.1 s) would otherwise keep the search waiting well past it."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.expired = True
            self.close()
            raise StopIteration

    def restart(self, items: Iterable[T]) -> None:
        """Drop what was handed out ahead and not yet read; go on with ``items``."""
        self._pending.clear()  # their outcomes still come back (a job in a pipe cannot be taken back), unread
        self._items = iter(items)
        self._exhausted = False

    def close(self) -> None:
        """Stop handing out items; the workers are free after: each finishes the jobs in its pipe, or is
        renewed if they take longer than ``_CLOSE_WAIT`` (a batch of mutants that loop)."""
        self.restart(())
        until = time.monotonic() + _CLOSE_WAIT
        while any(self._queues) and time.monotonic() < until:
            self._wait(until)
        for worker, queue in zip(self._workers, self._queues, strict=True):
            if queue:
                worker.abandon()
                queue.clear()

    def _fill(self) -> None:
        while len(self._pending) < self._window and not self._exhausted:
            free = [i for i, worker in enumerate(self._workers) if len(self._queues[i]) < worker.depth]
            if not free:
                return
            group: _Group[T] = []
            for item in itertools.islice(self._items, self._batch):
                group.append(_Slot(item))
            if len(group) < self._batch:
                self._exhausted = True
            if group:
                self._pending.extend(group)
                self._hand(min(free, key=lambda i: len(self._queues[i])), group)

    def _hand(self, at: int, group: _Group[T], again: bool = False) -> None:
        self._queues[at].append(group)
        (self._again if again else self._send)(self._workers[at], [slot.item for slot in group])

    def _wait(self, until: float | None = None) -> None:
        """Wait until some worker answers or overruns (or ``until``); give each slot answered its outcome."""
        if not any(worker.ready() for worker in self._workers):
            fds = [fd for fd in (worker.fileno() for worker in self._workers) if fd is not None]
            deadlines = [at for at in (*(worker.deadline() for worker in self._workers), until) if at is not None]
            if deadlines:
                select.select(fds, [], [], max(0.0, min(deadlines) - time.monotonic()))
        for at, (worker, queue) in enumerate(zip(self._workers, self._queues, strict=True)):
            if queue:
                worker.pump()
            while worker.ready():
                group = queue.popleft()
                status, value = worker.take()
                if status == "ok":
                    for slot, answer in zip(group, value, strict=True):
                        slot.outcome = ("ok", answer)
                elif len(group) == 1:
                    group[0].outcome = (status, value)
                else:  # which of them timed out, crashed or was refused: each alone tells
                    for slot in group:
                        self._hand(at, [slot], again=True)

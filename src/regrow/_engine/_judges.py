"""Candidates judged in several warm workers at once, their verdicts taken in search order.

Each worker is a child forked from this process (see :mod:`._worker`), so N workers judge N
candidates at the same time on N cores. The search stays deterministic: candidates are handed out
in search order and their verdicts are read back in that same order, whatever finished first, so
the search decides (counts its budget, finds its first plausible candidate, stops) exactly as one
worker would. What runs ahead of that order is speculation: a verdict the search no longer wants
(it stopped, or changed what it looks for with :meth:`Verdicts.restart`) is dropped unread.

Host threads only wait on the workers' pipes; the candidates run in the children. With one worker,
or where there is no ``fork`` (the in-process fallback has one live function to swap), candidates
are judged one at a time on the calling thread.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import queue
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from .._checks import Check
from ._localize import Spectrum
from ._worker import Worker

T = TypeVar("T")
V = TypeVar("V")

_AHEAD = 4  # candidates in flight per worker: a slow one must not leave the other workers idle


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
        prefer = getattr(check, "prefer", None)
        if callable(prefer):
            prefer(cost)


class Judges:
    """``count`` workers with the jobs of ``first`` (which is one of them, and the one for everything
    but judging: tracing, ranking)."""

    def __init__(self, first: Worker, count: int) -> None:
        count = max(1, count) if first.forking else 1
        self.first = first
        self.workers = [first, *(Worker(first.jobs, fork=True, trusted=first.trusted, fresh=first.fresh)
                                 for _ in range(count - 1))]
        # The threads live as long as the workers: a child dies with the thread that forked it (its
        # parent-death signal), and a worker may respawn its child on any of them.
        self._pool = (concurrent.futures.ThreadPoolExecutor(count, thread_name_prefix="regrow-judge")
                      if count > 1 else None)

    @property
    def forks(self) -> int:
        return sum(worker.forks for worker in self.workers)

    def verdicts(self, items: Iterable[T], judge: Callable[[Worker, T], V]) -> Verdicts[T, V]:
        """``(item, judge(worker, item))`` for each item, in the order of ``items``."""
        return Verdicts(self.workers, self._pool, items, judge)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        for worker in self.workers:
            worker.close()

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Verdicts(Generic[T, V]):
    """The verdicts of :meth:`Judges.verdicts`, an iterator; :meth:`restart` swaps the items still to come."""

    def __init__(self, workers: list[Worker], pool: concurrent.futures.Executor | None, items: Iterable[T],
                 judge: Callable[[Worker, T], V]) -> None:
        self._judge = judge
        self._items: Iterator[T] = iter(items)
        self._single = workers[0] if pool is None else None
        self._pool = pool
        self._free: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        for worker in workers:
            self._free.put(worker)
        self._window = _AHEAD * len(workers)
        self._pending: collections.deque[tuple[T, concurrent.futures.Future[V]]] = collections.deque()
        self._dropped: list[concurrent.futures.Future[V]] = []

    def __iter__(self) -> Verdicts[T, V]:
        return self

    def __next__(self) -> tuple[T, V]:
        if self._single is not None:
            item = next(self._items)
            return item, self._judge(self._single, item)
        self._fill()
        if not self._pending:
            self.close()
            raise StopIteration
        item, future = self._pending.popleft()
        verdict = future.result()
        self._fill()  # the workers go on while the caller looks at this verdict
        return item, verdict

    def restart(self, items: Iterable[T]) -> None:
        """Drop what was handed out ahead and not yet read; go on with ``items``."""
        self._drop()
        self._items = iter(items)

    def _fill(self) -> None:
        assert self._pool is not None
        while len(self._pending) < self._window:
            item = next(self._items, _END)
            if item is _END:
                return
            self._pending.append((item, self._pool.submit(self._run, item)))  # type: ignore[arg-type]

    def _run(self, item: T) -> V:
        worker = self._free.get()
        try:
            return self._judge(worker, item)
        finally:
            self._free.put(worker)

    def _drop(self) -> None:
        pending, self._pending = self._pending, collections.deque()
        for _, future in pending:
            if not future.cancel():  # a verdict being reached finishes (within its time limit), unread
                self._dropped.append(future)

    def close(self) -> None:
        """Stop handing out items; wait for the verdicts being reached (the workers are free after)."""
        self._drop()
        self._items = iter(())
        concurrent.futures.wait(self._dropped)
        self._dropped.clear()


_END = object()

"""The single edits of a target in search order, made only as far as the search reads them.

The search order is the sort of every edit by ``(tier, -suspicion, prior, site, k)``: the family's tier,
how suspicious the site's line is, the operator's prior inside its tier, the site's place in the
function, and the edit's place among its operator's edits there (ties kept in the order of the
operators). Sorting needs every edit first, and their number grows faster than the function (a
statement copied, renamed, to every place: ~250,000 edits for 100 lines, minutes for 1,000), so
:class:`Ranked` walks the same order directly — tier, then suspicion, then prior, then site, then
``k`` across the operators of one prior — and makes an edit only when it is read. The first
candidate of a 3,000-line function is then as near as that of a 30-line one, and planning stops at
the deadline: the clock is read at every site the walk visits, so a walk over sites with nothing to
offer cannot outlast it either.

A worker forked with the plan asks for edits by position (:meth:`Ranked.__getitem__`): its copy of
the walk goes on from where the host's was when it forked, without a deadline (the host made that
edit in time already), and being deterministic, makes the same edits.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from ._edits import Operator, Replacement
from ._scope import Scope, Site

Progress = Callable[[str], None]


@dataclasses.dataclass(order=True)
class Edit:
    """One edit at one site; ``key`` is its place in the search order (see the module)."""

    key: tuple[int, float, int, int, int]
    op: Operator = dataclasses.field(compare=False)
    site: Site = dataclasses.field(compare=False)
    new: Replacement = dataclasses.field(compare=False)
    index: int = dataclasses.field(default=-1, compare=False)  # its place in the plan's order (-1 - n: pair n)
    second: Edit | None = dataclasses.field(default=None, compare=False)  # the other edit of a pair


class Stats(Protocol):
    """What the walk keeps up to date of the search's counts (``_plan.Stats``)."""

    edits: int
    evaluated: int
    stopped: str


class Ranked:
    """The edits of ``operators`` at the sites of ``scope`` in search order, made as they are read.

    ``weight(site)`` is the site's suspicion. ``deadline`` (by ``clock``) ends a walk in search order
    (:meth:`__iter__`, :meth:`upto`); ``progress`` hears a line when the walk reaches a new tier.
    """

    def __init__(self, scope: Scope, operators: list[Operator], weight: Callable[[Site], float], *,
                 deadline: float | None = None, clock: Callable[[], float] = time.monotonic,
                 progress: Progress | None = None, stats: Stats | None = None) -> None:
        self._made: list[Edit] = []
        self._deadline, self._clock, self._progress, self._stats = deadline, clock, progress, stats
        self.overdue = False  # a walk in search order stopped at the deadline with edits left
        self.timed = False  # whether the walk now under way stops at the deadline
        self.scope = scope
        self.sites = len(scope.sites)
        self._pid = os.getpid()
        self._walk: Iterator[Edit | None] | None = _walk(scope, operators, weight, self)

    def __len__(self) -> int:
        """Edits made so far (all of them once the walk is done)."""
        return len(self._made)

    @property
    def done(self) -> bool:
        return self._walk is None

    def __getitem__(self, index: int) -> Edit:
        """The edit at ``index`` in search order, made now if it was not (no deadline: see the module)."""
        if index < 0:
            raise IndexError("edits are read by their place in the search order")
        self._extend(index + 1, timed=False)
        return self._made[index]

    def __iter__(self) -> Iterator[Edit]:
        return self.upto()

    def upto(self, start: int = 0) -> Iterator[Edit]:
        """The edits from ``start`` on, in search order, until there are no more or the deadline passes."""
        index = start
        while True:
            if index >= len(self._made) and not self._extend(index + 1, timed=True):
                return
            yield self._made[index]
            index += 1

    def _extend(self, count: int, timed: bool) -> bool:
        """Make edits until there are ``count``; False if the walk ended (or, ``timed``, met the deadline) first."""
        self.timed = timed
        while len(self._made) < count:
            if self._walk is None:
                return False
            edit = None if timed and self.late() else next(self._walk, _END)
            if edit is _END:
                self._walk = None
                return False
            if edit is None:  # the deadline, in search order
                self._overdue()
                return False
            edit.index = len(self._made)
            self._made.append(edit)
            if self._stats is not None:
                self._stats.edits = len(self._made)
        return True

    def _overdue(self) -> None:
        self.overdue = True
        if self._stats is not None and not self._stats.stopped:
            self._stats.stopped = (f"time budget spent while planning, after {self._stats.evaluated} candidates "
                                   f"and {len(self._made)} edits ranked (raise timeout / --timeout)")

    def late(self) -> bool:
        return self._deadline is not None and self._clock() >= self._deadline

    def tell(self, message: str) -> None:
        """Progress, from the process that made the plan only: a worker's copy of the walk tells no one
        (the handlers are the host's: a display, the user's own)."""
        if self._progress is not None and os.getpid() == self._pid:
            self._progress(message)


_TIER_NAMES = {1: "core", 2: "template", 3: "copy", 4: "statement"}


def _walk(scope: Scope, operators: list[Operator], weight: Callable[[Site], float],
          ranked: Ranked) -> Iterator[Edit | None]:
    """Every edit in search order (see the module). Yields ``None`` (and then goes on from the same place)
    where a walk in search order meets the deadline between two sites."""
    weights = {site.order: weight(site) for site in scope.sites}
    by_weight: dict[float, list[Site]] = {}
    for site in scope.sites:  # in site order within each weight
        by_weight.setdefault(weights[site.order], []).append(site)
    ordered = sorted(by_weight, reverse=True)
    for tier in sorted({op.tier for op in operators}):
        ranked.tell(f"planning: {_TIER_NAMES.get(tier, f'tier {tier}')} edits at {ranked.sites} sites "
                    f"({len(ranked)} ranked so far)")
        priors = sorted({op.prior for op in operators if op.tier == tier})
        for score in ordered:
            for prior in priors:
                group = [op for op in operators if op.tier == tier and op.prior == prior]
                for site in by_weight[score]:
                    while ranked.timed and ranked.late():  # sites with nothing to offer must not outlast it
                        yield None
                    streams = [(op, op.edits(site, scope)) for op in group]
                    for k in itertools.count():
                        live = [(op, new) for op, stream in streams if (new := next(stream, _END)) is not _END]
                        if not live:
                            break
                        for op, new in live:
                            yield Edit((tier, -score, prior, site.order, k), op, site, new)


_END: Any = object()

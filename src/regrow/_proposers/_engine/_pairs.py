"""Two coupled edits: searched only once every single edit has failed, and only among the best of them.

Some bugs need the same slip undone in two places (``max`` written for ``min`` twice, two bounds both
made strict). The pairs are drawn from the top of the single edits' search order — the most
suspicious lines, the core families — at most a few per site, so their count is bounded by a
constant; pairs of one operator come first (the same slip twice), then by the sum of their ranks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

from ._edits import Operator, Replacement
from ._scope import Scope, Site

TOP = 40  # single edits drawn on
PER_SITE = 4  # of them at one site
_MAX_TIER = 2  # core and template edits only: statements and copies pair into too much


class _Single(Protocol):
    @property
    def op(self) -> Operator: ...
    @property
    def site(self) -> Site: ...
    @property
    def new(self) -> Replacement: ...


E = TypeVar("E", bound=_Single)


class Coupled:
    """The operator of a pair of edits, for reports and ranking: named after both, in the later tier."""

    def __init__(self, first: Operator, second: Operator) -> None:
        self.name = f"{first.name}+{second.name}"
        self.tier = max(first.tier, second.tier)
        self.prior = first.prior + second.prior

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        return iter(())  # pairs are made from single edits, never at one site


def pairs(edits: Iterable[E], top: int = TOP, per_site: int = PER_SITE) -> Iterator[tuple[E, E]]:
    """Pairs of two of the first ``top`` edits (in search order) at different sites, best first."""
    chosen: list[E] = []
    at: Counter[int] = Counter()
    for edit in edits:
        if edit.op.tier > _MAX_TIER or len(chosen) >= top:
            break
        if at[edit.site.order] < per_site:
            at[edit.site.order] += 1
            chosen.append(edit)
    couples = [(i, j) for i in range(len(chosen)) for j in range(i + 1, len(chosen))
               if chosen[i].site.order != chosen[j].site.order]
    couples.sort(key=lambda ij: (chosen[ij[0]].op.name != chosen[ij[1]].op.name, ij[0] + ij[1], ij))
    for i, j in couples:
        yield chosen[i], chosen[j]

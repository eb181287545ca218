"""The overfitting guard: order the candidates that pass every check by how likely they are right.

Weak tests let wrong patches pass. Among passing candidates prefer, in this order: one that never
raises (or hangs) where the original returned normally; the smallest edit; core before template
before copy before statement edits; one that leaves no binding dead that its rivals keep read; the
most agreement with the original on inputs where the original returned — the tests' own inputs and
small variations of them, where a bug that the tests pinned down rarely shows; then the search order.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..._candidate import Candidate
from ..._checks._inputs import Call, SealedCall, behaviour, open_all, returned, signatures, variations
from ..._checks._spectrum import Spectrum
from ..._sandbox._warm import Worker
from ..._target._target import Target
from ._edits import TIER_NAMES

_MAX_INPUTS = 80
_VARIATIONS = 120  # at most this many variations of the given calls
_CALL_LIMIT = 0.25  # seconds one call may take on a compared input


@dataclasses.dataclass
class Evidence:
    """Why a plausible candidate ranks where it does."""

    candidate: Candidate
    tier: int
    order: int  # position in the search order
    agree: int = 0  # inputs where it behaves as the original did
    compared: int = 0  # inputs where the original returned normally
    raised: int = 0  # inputs where it raised or hung and the original returned
    confidence: float = 0.0
    dead: int = 0  # bindings it leaves unread, beyond the fewest any candidate leaves

    def key(self) -> tuple[bool, int, int, int, float, int]:
        ratio = self.agree / self.compared if self.compared else 1.0
        return (self.raised > 0, self.candidate.edit_size, self.tier, self.dead, -ratio, self.order)

    def note(self, rank: int, total: int) -> str:
        agreement = f"agrees with the original on {self.agree}/{self.compared} inputs" if self.compared else \
            "no inputs to compare"
        raised = f", raises where it returned on {self.raised}" if self.raised else ""
        return (f"rank {rank}/{total}; edit size {self.candidate.edit_size}; {TIER_NAMES.get(self.tier, '?')}; "
                f"{agreement}{raised}; confidence {self.confidence:.2f}")


def guard_inputs(spectrum: Spectrum | None, worker: Worker) -> list[SealedCall]:
    """The calls to compare on: those of passing checks (all checks if none passed) and variations
    (made in the worker, which alone may open the calls)."""
    if spectrum is None:
        return []
    given = spectrum.calls(passing_only=True) or spectrum.calls()
    return [*given, *variations(worker, given, min(_VARIATIONS, _MAX_INPUTS - len(given)))][:_MAX_INPUTS]


@contextmanager
def installed(target: Target, source: str) -> Iterator[Callable[..., Any]]:
    """``source`` running in the live function (recursive calls included), the original put back after."""
    live = target.func
    saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
    fn = target.compile(source)
    try:
        yield live if target.install(fn) == "code" else fn
    finally:
        live.__code__, live.__defaults__, live.__kwdefaults__ = saved


def behaviour_job(target: Target) -> Callable[[str | None, Any], list[str]]:
    """The ``"behaviour"`` job for a worker: :func:`behaviour_of` on plain sealed calls, opened there."""
    return lambda source, calls: behaviour_of(target, source, open_all(calls))


def behaviour_of(target: Target, source: str | None, calls: Sequence[Call]) -> list[str]:
    """Signatures of the original (``source`` None) or a candidate on ``calls``."""
    if source is None:
        return behaviour(target.func, calls, _CALL_LIMIT)
    with installed(target, source) as fn:
        return behaviour(fn, calls, _CALL_LIMIT)


def rank(found: Sequence[Evidence], spectrum: Spectrum | None, worker: Worker) -> list[Evidence]:
    """``found`` measured against the original and sorted best first, each with a confidence."""
    if not found:
        return []
    calls = guard_inputs(spectrum, worker)
    limit = _CALL_LIMIT * len(calls) + 1.0
    plain = [call.to_plain() for call in calls]
    status, original = worker.call("behaviour", None, plain, timeout=limit, read=signatures(len(calls)))
    if status != "ok":  # the original itself hangs on them: no evidence to rank by
        original = ["timeout"] * len(calls)
    kept = [(call, outcome) for call, outcome in zip(plain, original, strict=True) if returned(outcome)]
    behaviours: list[list[str]] = []
    for evidence in found:
        status, outcomes = worker.call("behaviour", evidence.candidate.source, [c for c, _ in kept], timeout=limit,
                                       read=signatures(len(kept)))
        if status != "ok":
            outcomes = ["timeout"] * len(kept)
        behaviours.append(outcomes)
        evidence.compared = len(kept)
        evidence.agree = sum(mine == theirs for mine, (_, theirs) in zip(outcomes, kept, strict=True))
        evidence.raised = sum(not returned(mine) for mine in outcomes)
    distinct = max(len({tuple(b) for b in behaviours}), 1)
    unread = [len(unread_bindings(evidence.candidate.source)) for evidence in found]
    for evidence, count in zip(found, unread, strict=True):
        evidence.confidence = _confidence(evidence, distinct)
        evidence.dead = count - min(unread)
    return sorted(found, key=Evidence.key)


def unread_bindings(source: str) -> set[str]:
    """The parameters and variables a function binds and never reads (``_``-names left out).

    A fix that leaves a binding dead is rarely the one meant: ``(v, v) for k, v in items`` and ``(v, k) for
    k, v in items`` both swap a pair back, but the first drops ``k`` and duplicates ``v``. Among passing
    candidates of one size and family, the one that leaves no more dead bindings than its rivals comes
    first (a binding dead in the original is dead in every candidate, and counts for none)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return {name for name in bound - read if not name.startswith("_") and name not in ("self", "cls")}


def _confidence(evidence: Evidence, distinct: int) -> float:
    """A heuristic in [0, 1]: high for a small core edit that keeps the original's behaviour elsewhere
    and has no rival that behaves differently; low for one that raises where the original did not."""
    ratio = evidence.agree / evidence.compared if evidence.compared else 0.5
    value = 0.4 + 0.5 * ratio
    value += {1: 0.08, 2: 0.0, 3: -0.08, 4: -0.12}.get(evidence.tier, 0.0)
    value -= 0.02 * max(evidence.candidate.edit_size - 1, 0)
    if evidence.raised:
        value *= 0.4
    if distinct > 1:  # passing candidates that disagree with each other: the tests do not decide
        value *= 0.85
    return round(min(max(value, 0.05), 0.99), 2)

"""The overfitting guard: order the candidates that pass every check by how likely they are right.

Weak tests let wrong patches pass. Among passing candidates prefer, in this order: one that never
raises (or hangs) where the original returned normally on the passing tests' inputs; the smallest
edit; core before template before copy before statement edits; one that leaves no binding dead that
its rivals keep read; one that changes the original's behaviour near the failing tests' calls before
one that keeps it exactly on every such input (there the original is wrong: keeping its behaviour is
keeping the bug); the most agreement
with the original on the passing tests' own inputs and small variations of them, where a bug that
the tests pinned down rarely shows; then the search order.

Candidates that pass every check but behave differently on those inputs are not decided by this order:
:func:`._abstain.undecided` turns them into an :class:`~regrow._ambiguity.Ambiguity` (docs/engine.md).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..._candidate import Candidate
from ..._checks._evaluate import clear_caches
from ..._checks._inputs import Call, SealedCall, behaviour, open_all, returned, signatures, variations
from ..._checks._render import render
from ..._checks._spectrum import Spectrum
from ..._sandbox._warm import Worker
from ..._target._target import Target
from ._edits import TIER_NAMES

_MAX_INPUTS = 80
_VARIATIONS = 120  # at most this many variations of the given calls
_CALL_LIMIT = 0.25  # seconds one call may take on a compared input


_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0\.0(?![\d.eE])")
_BOOLS = {"returned True": "returned 1", "returned False": "returned 0"}
_WHOLE_FLOAT = re.compile(r"(?<![\w.])(-?\d+)\.0(?![\d.eE])")


def alike(output: str) -> str:
    """A behaviour as candidates are compared by: a whole float is the int it equals, ``-0.0`` is ``0``, a
    returned ``True`` or ``False`` is ``1`` or ``0`` (equal numbers that no test comparing with ``==`` tells
    apart: ``x / -y`` and ``-x / y``, ``return 0`` and ``return 0.0``, ``return 1`` and ``return True``, are
    one answer)."""
    output = _BOOLS.get(output, output)
    return _WHOLE_FLOAT.sub(r"\1", _NEGATIVE_ZERO.sub("0.0", output))


@dataclasses.dataclass
class Evidence:
    """Why a plausible candidate ranks where it does."""

    candidate: Candidate
    tier: int
    order: int  # position in the search order
    agree: int = 0  # inputs where it behaves as the original did
    compared: int = 0  # inputs where the original returned normally
    raised: int = 0  # inputs where it raised or hung and the original returned
    raised_given: int = 0  # of those, the passing tests' own calls (not variations of them)
    confidence: float = 0.0
    dead: int = 0  # bindings it leaves unread and tests it makes vacuous, beyond the fewest any candidate has
    kept: bool = False  # as the original on every input near the failing calls, where a rival is not
    crash: bool = False  # kept, and so keeps a crash of the original near the failing calls
    lost: frozenset[str] = frozenset()  # bindings the original reads that it leaves unread (none revived)
    outcomes: tuple[str, ...] = ()  # its behaviour on every compared input (see Ranking.calls)

    def key(self) -> tuple[bool, bool, int, int, int, bool, float, int]:
        # Dominated candidates (see _abstain.undecided) rank below every candidate that is not: one that leaves
        # unread a binding the original reads is never offered ahead of one that keeps it read.
        ratio = self.agree / self.compared if self.compared else 1.0
        return (self.raised > 0, bool(self.lost), self.candidate.edit_size, self.tier, self.dead, self.kept, -ratio,
                self.order)

    def note(self, rank: int, total: int) -> str:
        agreement = f"agrees with the original on {self.agree}/{self.compared} inputs" if self.compared else \
            "no inputs to compare"
        raised = f", raises where it returned on {self.raised}" if self.raised else ""
        raised += ", keeps the original's behaviour near the failing inputs" if self.kept else ""
        raised += f", leaves {', '.join(sorted(self.lost))} unread" if self.lost else ""
        return (f"rank {rank}/{total}; edit size {self.candidate.edit_size}; {TIER_NAMES.get(self.tier, '?')}; "
                f"{agreement}{raised}; confidence {self.confidence:.2f}")


@dataclasses.dataclass
class Ranking:
    """The plausible candidates best first, and the inputs they were compared on."""

    ranked: list[Evidence]
    calls: list[SealedCall] = dataclasses.field(default_factory=list)  # every compared input
    original: list[str] = dataclasses.field(default_factory=list)  # the original's behaviour on each
    stable: list[bool] = dataclasses.field(default_factory=list)  # the original behaved alike on two runs of each

    def doubt(self) -> str:
        """Why no candidate is worth offering (``""`` when one is): each leaves unread a binding the original
        reads. The value the original computed there is dropped, not put right: the fix meant is an edit the
        search did not reach (a larger one), and the best of these would be a guess."""
        if not self.ranked or not all(evidence.lost for evidence in self.ranked):
            return ""
        names = sorted({name for evidence in self.ranked for name in evidence.lost})
        return (f"doubtful: every candidate that passes ({len(self.ranked)}) leaves unread what the original "
                f"reads ({', '.join(names)})")


def guard_inputs(spectrum: Spectrum | None, worker: Worker) -> tuple[list[SealedCall], int]:
    """The calls to compare on: those of passing checks, then variations of them (made in the worker, which
    alone may open the calls); and how many of them are the checks' own. Failing checks' calls are not among
    them: agreeing with the original there is no merit (see :func:`failing_inputs`)."""
    if spectrum is None:
        return [], 0
    given = spectrum.calls(passing_only=True)[:_MAX_INPUTS]
    return [*given, *variations(worker, given, min(_VARIATIONS, _MAX_INPUTS - len(given)))][:_MAX_INPUTS], len(given)


def failing_inputs(spectrum: Spectrum | None, worker: Worker,
                   known: Sequence[SealedCall]) -> tuple[list[SealedCall], list[SealedCall], list[SealedCall]]:
    """The failing checks' calls, their small variations and their wide ones: those not among ``known``."""
    if spectrum is None:
        return [], [], []
    seen = {call.key for call in known}
    given = [call for call in spectrum.calls() if call.key not in seen][:_MAX_INPUTS]
    seen.update(call.key for call in given)
    # Near every call a failing check made (one a passing check made too: ``f(123)`` both as the failing call
    # and in a failing test), the function's own texts put into strings, and wider changes: there the original
    # is wrong, and how a candidate treats them is what tells a fix from one that only stops the failure.
    failing = list({call.key: call for run in spectrum.failing for call in run.calls}.values())[:_MAX_INPUTS]
    nearby = [call for call in variations(worker, failing, _MAX_INPUTS, with_texts=True) if call.key not in seen]
    seen.update(call.key for call in nearby)
    wide = [call for call in variations(worker, failing, _MAX_INPUTS, wide=True) if call.key not in seen]
    return given, nearby, wide


@contextmanager
def installed(target: Target, source: str) -> Iterator[Callable[..., Any]]:
    """``source`` running in the live function (recursive calls included), the original put back after."""
    live = target.func
    saved = (live.__code__, live.__defaults__, live.__kwdefaults__)
    fn = target.compile(source)
    try:
        yield live if target.install(fn, lasting=False) == "code" else fn
    finally:
        live.__code__, live.__defaults__, live.__kwdefaults__ = saved


def behaviour_job(target: Target) -> Callable[[str | None, Any], list[str]]:
    """The ``"behaviour"`` job for a worker: :func:`behaviour_of` on plain sealed calls, opened there."""
    return lambda source, calls: behaviour_of(target, source, open_all(calls))


def behaviour_of(target: Target, source: str | None, calls: Sequence[Call]) -> list[str]:
    """Signatures of the original (``source`` None) or a candidate on ``calls``, the arguments after each
    written out with their state (:func:`~regrow._checks._render.render`): two candidates that leave a
    receiver in different states differ, though its ``repr`` may hide it."""
    clear_caches(target)  # what an earlier run cached must not answer for this one (a cached recursive function)
    if source is None:
        return behaviour(target.func, calls, _CALL_LIMIT, render)
    with installed(target, source) as fn:
        return behaviour(fn, calls, _CALL_LIMIT, render)


def rank(found: Sequence[Evidence], spectrum: Spectrum | None, worker: Worker, source: str = "") -> Ranking:
    """``found`` measured against the original (whose source is ``source``) and sorted best first, each with
    a confidence."""
    if not found:
        return Ranking([])
    for evidence in found:
        evidence.lost = lost_bindings(source, evidence.candidate.source) if source else frozenset()
    calls, given = guard_inputs(spectrum, worker)
    passing = len(calls)
    failed, nearby, wide = failing_inputs(spectrum, worker, calls)
    calls += [*failed, *nearby, *wide]
    around = passing + len(failed)  # from here on, the failing calls' neighbourhood
    limit = _CALL_LIMIT * len(calls) + 1.0
    plain = [call.to_plain() for call in calls]
    status, original = worker.call("behaviour", None, plain, timeout=limit, read=signatures(len(calls)))
    if status != "ok":  # the original itself hangs on them: no evidence to rank by
        original = ["timeout"] * len(calls)
    status, again = worker.call("behaviour", None, plain, timeout=limit, read=signatures(len(calls)))
    again = again if status == "ok" else []  # a second run that failed: no input counts as stable
    stable = [first == second for first, second in zip(original, again, strict=False)]
    stable += [False] * (len(calls) - len(stable))
    for evidence in found:
        status, outcomes = worker.call("behaviour", evidence.candidate.source, plain, timeout=limit,
                                       read=signatures(len(calls)))
        evidence.outcomes = tuple(outcomes if status == "ok" else ["timeout"] * len(calls))
        pairs = list(zip(evidence.outcomes, original, strict=True))
        kept = [(mine, theirs) for mine, theirs in pairs[:passing] if returned(theirs)]
        evidence.compared = len(kept)
        evidence.agree = sum(mine == theirs for mine, theirs in kept)
        evidence.raised = sum(not returned(mine) for mine, _ in kept)
        evidence.raised_given = sum(not returned(mine) and returned(theirs) for mine, theirs in pairs[:given])
    near = [[alike(mine) for mine in evidence.outcomes[around:]] == [alike(theirs) for theirs in original[around:]]
            for evidence in found]
    crashes = [i for i in range(around, len(calls)) if _crash(original[i], source)]
    distinct = max(len({evidence.outcomes for evidence in found}), 1)
    unread = [len(unread_bindings(evidence.candidate.source)) + vacuous_tests(evidence.candidate.source)
              for evidence in found]
    for evidence, count, same in zip(found, unread, near, strict=True):
        evidence.confidence = _confidence(evidence, distinct)
        evidence.dead = count - min(unread)
        evidence.kept = bool(nearby) and same and not all(near)
        evidence.crash = evidence.kept and bool(crashes)
    return Ranking(sorted(found, key=Evidence.key), calls, original, stable)


def _crash(signature: str, source: str) -> bool:
    """Whether ``signature`` is an exception the function does not name (``raised ZeroDivisionError`` where it
    writes no ``ZeroDivisionError``): a crash, not one of its own ``raise`` statements."""
    name = signature.removeprefix("raised ")
    return name != signature and name.isidentifier() and re.search(rf"\b{name}\b", source) is None


def lost_bindings(original: str, source: str) -> frozenset[str]:
    """The bindings ``original`` reads that ``source`` leaves unread (none when it reads one the original left
    unread), counting only parameters and variables whose value the original computes from the function's own
    names (``count = len(serials)``, not ``seen = set()``: a value made from nothing of the call's, which
    reading may never have told anything)."""
    dead, now = unread_bindings(original), unread_bindings(source)
    if dead - now:
        return frozenset()
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    params = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    local = params | {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(
        node.ctx, ast.Load)}
    computed = set(params)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)):
            value = node.iter if isinstance(node, ast.For) else node.value
            if value is not None and any(isinstance(name, ast.Name) and name.id in local for name in ast.walk(value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                computed.update(name.id for target in targets for name in ast.walk(target)
                                if isinstance(name, ast.Name))
    return frozenset(name for name in now - dead if name in computed)


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


def vacuous_tests(source: str) -> int:
    """How many tests (and calls) in a function can never decide (or change) anything: ``s.startswith("")``
    and ``s.endswith("")`` (always true), ``"" in s`` (always true), a name compared with itself (``d == d``;
    not ``x != x``, the test for a NaN), a slice of constant bounds compared
    with ``==`` or ``!=`` to a longer text (``label[2:3] == "--"``: never equal), and ``s.replace("-", "-")``.
    A fix that makes one vacuous removes it while seeming to change it; it counts as a dead binding does
    (see :func:`unread_bindings`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return 0
    return sum(_vacuous(node) for node in ast.walk(tree))


def _empty(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in ("", b"") and type(node.value) in (str, bytes)


def _plain(node: ast.expr) -> bool:
    """A name or a chain of attributes of one: the same value on both sides of a comparison."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _vacuous(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        if node.func.attr == "replace" and len(node.args) == 2:  # a text replaced by itself: nothing changes
            return all(isinstance(arg, ast.Constant) for arg in node.args) and ast.dump(node.args[0]) == \
                ast.dump(node.args[1])
        return node.func.attr in ("startswith", "endswith") and len(node.args) == 1 and _empty(node.args[0])
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    if ast.dump(node.left) == ast.dump(node.comparators[0]) and _plain(node.left):
        return not isinstance(node.ops[0], ast.NotEq)  # ``d == d``: always the same (``x != x`` asks for a NaN)
    if isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return _empty(node.left)
    if not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return False
    sides = (node.left, node.comparators[0])
    for part, text in (sides, sides[::-1]):
        if isinstance(part, ast.Subscript) and isinstance(part.slice, ast.Slice) and part.slice.step is None \
                and isinstance(text, ast.Constant) and type(text.value) in (str, bytes):
            bounds = [bound.value for bound in (part.slice.lower, part.slice.upper)
                      if isinstance(bound, ast.Constant) and type(bound.value) is int and bound.value >= 0]
            if len(bounds) == 2 and isinstance(text.value, (str, bytes)):
                return len(text.value) > max(bounds[1] - bounds[0], 0)
    return False


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

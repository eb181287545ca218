"""The ranked edits of one target, and how an edit becomes a candidate — in the worker that judges it.

The host ranks every edit once (:meth:`~._search.Engine.plan`) and hands out positions in that
order; the worker's child, forked with the plan in its memory, turns a position into source text
(:func:`._splice.splice`), compiles it and judges it. Making the text is most of the cost of a
candidate besides running the tests, so it is spread over the workers with the judging, and the
host is left with the order and the verdicts. Two edits that compile to the same code are one
candidate: each answer carries what its text compiles to (a digest of the code object, positions
left out), and the host, reading answers in search order, counts the first and skips the others.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import marshal
import time
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from ..._candidate import Candidate
from ..._checks._evaluate import evaluate
from ..._checks._oracles import Check, known_to_pass
from ..._checks._spectrum import Spectrum
from ..._checks._test_limits import per_test_limits
from ..._sandbox._warm_child import Overrun, cpu_limit, time_limit
from ..._target._target import Target
from ._edits import EditSizes, Insert, Replacement
from ._inplace import InPlace
from ._pairs import Coupled, pairs
from ._ranked import Edit, Ranked
from ._scope import Site
from ._splice import prepare, splice, splice_both

_RIVAL_TIER = 2  # core and template edits: rivals of a find in its statement (see Plan.order)
_RIVAL_OPERATORS = frozenset({"drop-operand", "off-by-one"})  # judged as rivals in the find's statement, any size


@dataclasses.dataclass
class Stats:
    """What one ``propose`` call did, for reports and benchmarks."""

    edits: int = 0  # edits the operators proposed
    candidates: int = 0  # distinct candidates that compiled
    evaluated: int = 0  # candidates run against the checks
    plausible: int = 0  # candidates that passed every check
    first: int | None = None  # evaluations until the first plausible one
    localize_seconds: float = 0.0
    search_seconds: float = 0.0  # time spent building and checking candidates
    candidate_timeout: float = 0.0
    forks: int = 0  # workers started: one, plus one per candidate that had to be killed
    jobs: int = 1  # workers that judged candidates at once
    batch: int = 1  # candidates a worker judged per job
    again: int = 0  # candidates judged again, none having passed, after failing by a time limit alone
    out_of_time: int = 0  # candidates that failed by a time limit (the candidate's or a test's own)
    stopped: str = ""  # why the search ended (see Engine.stop_reason)

    @property
    def per_second(self) -> float:
        return self.evaluated / self.search_seconds if self.search_seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "per_second": round(self.per_second, 1)}


class Made(NamedTuple):
    """A candidate made from an edit: its text, the digest of its code, its edit size, the function."""

    text: str
    key: str
    size: int
    compiled: Any = None  # the types.FunctionType (typed Any: mypy would bind a function-typed field like a method)


@dataclasses.dataclass
class Plan:
    """The ranked edits of one target, turned into candidates on demand."""

    target: Target
    source: str
    function: ast.FunctionDef | ast.AsyncFunctionDef
    edits: list[Edit] | Ranked  # Ranked: made as the search reads them (see _ranked)
    spectrum: Spectrum | None
    stats: Stats
    reuse: bool = False  # judge a candidate only on the checks that reach what it changes (see unreached)
    limits: dict[str, float] = dataclasses.field(default_factory=dict)  # each check's own time limit (seconds)
    cpu_limits: dict[str, float] = dataclasses.field(default_factory=dict)  # ... and CPU-time limit (CPU seconds)

    def __post_init__(self) -> None:
        if isinstance(self.edits, list):
            for index, edit in enumerate(self.edits):
                edit.index = index
        self._sizes = EditSizes()
        self._spans: dict[int, range] = {}
        self._conditions: dict[int, ast.expr | None] = {}
        self._unreached: dict[tuple[tuple[int, bool], ...], frozenset[str]] = {}

    def prepare(self) -> None:
        """Work out now what making any candidate needs (the function's nodes for splicing, their parents):
        before the judging children fork, so that each inherits them instead of reading 3,000 lines again."""
        prepare(self.source, self.function)
        self._parents  # noqa: B018 (cached properties, worked out here)
        self._inplace  # noqa: B018

    @functools.cached_property
    def _inplace(self) -> InPlace:
        return InPlace(self.target, self.function)

    @functools.cached_property
    def _parents(self) -> dict[int, ast.AST]:
        return {id(child): node for node in ast.walk(self.function) for child in ast.iter_child_nodes(node)}

    def _span(self, site: Site) -> range:
        """The file lines of the statement the site is in (all of it: an edit there runs only if it starts)."""
        span = self._spans.get(site.order)
        if span is None:
            node: ast.AST = site.node
            while not isinstance(node, ast.stmt) and id(node) in self._parents:
                node = self._parents[id(node)]
            offset = self.target.def_lineno - 1  # the function's lines count from its def line
            first, last = getattr(node, "lineno", 1), getattr(node, "end_lineno", None)
            if not isinstance(node, ast.stmt) or last is None:  # nowhere to pin it: the whole function
                first, last = self.function.lineno, self.function.end_lineno or self.function.lineno
            span = self._spans[site.order] = range(first + offset, last + offset + 1)
        return span

    def unreached(self, edit: Edit) -> frozenset[str]:
        """The checks that passed on the original without running a line of the statements ``edit``
        changes: the candidate behaves there exactly as the original did, so they pass on it too, unrun.

        Checks that did not finish are not among them, nor any check when the plan does not reuse the
        original's verdicts (a suite whose tests read what earlier tests left: see ``Engine(fresh=)``).
        """
        if not self.reuse or self.spectrum is None:
            return frozenset()
        changes = ((edit.site, edit.new), *(((edit.second.site, edit.second.new),) if edit.second is not None else ()))
        key = tuple((site.order, isinstance(new, Insert)) for site, new in changes)
        unrun = self._unreached.get(key)
        if unrun is None:  # once per site (or pair of sites): every edit there judges a candidate in this child
            lines = {line for site, new in changes for line in self._reach(site, new)}
            unrun = self._unreached[key] = frozenset(  # a check that did not finish is a failing one
                run.check for run in self.spectrum.passing if run.lines.isdisjoint(lines))
        return unrun

    def _reach(self, site: Site, new: Replacement) -> range:
        """The lines one of which a check must run for the edit to change what it does: the statement's,
        or the whole function's where the statement tells nothing — new statements put beside it run
        when the code next to them runs, and a statement no check ran a line of (a docstring, ``pass``:
        the tracer never reports them) may be passed through by every check."""
        span = self._span(site)
        reached = any(not run.lines.isdisjoint(span) for run in self.spectrum.runs) if self.spectrum else False
        if isinstance(new, Insert) or not reached:
            offset = self.target.def_lineno - 1
            return range(self.function.lineno + offset, (self.function.end_lineno or self.function.lineno) + offset + 1)
        return span

    @functools.cached_property
    def original(self) -> str:
        """The digest of the original's code: an edit that compiles to it changes nothing."""
        return digest(self.target.compile(self.source).__code__)

    @functools.cached_property
    def couples(self) -> list[Edit]:
        """Pairs of two edits at separate sites (see :mod:`._pairs`), as edits of the ``Coupled`` operator."""
        return [dataclasses.replace(first, op=Coupled(first.op, second.op), index=-1 - number, second=second)
                for number, (first, second) in enumerate(pairs(self.edits))]

    def size(self, edit: Edit) -> int:
        if edit.second is not None:
            return self._sizes(edit.site, edit.new) + self._sizes(edit.second.site, edit.second.new)
        return self._sizes(edit.site, edit.new)

    def order(self, max_size: Callable[[], int | None], after: Edit | None = None,
              rivals: bool = False) -> Iterator[Edit]:
        """The single edits in search order after ``after``; those larger than ``max_size()`` skipped, but, with
        ``rivals`` (``after`` puts an ignored argument back to use: :func:`._search.revives`), for core and
        template edits in the statement ``after`` changed: other ways to use it there (``len(s) if n is None
        else n`` beside ``len(s[:n])``), and a larger one the tests pass too is what tells a fix from a guess
        (:mod:`._abstain`). Likewise, whatever ``rivals`` says, for those in the condition ``after`` changed (of
        an ``if``, ``while``, conditional expression or ``assert``): a condition the tests pass is easily one
        that only weakens the right one (``a < b`` for ``a != b + 1``). Elsewhere a larger edit is less likely
        than the one found, and is not judged."""
        start = 0 if after is None else after.index + 1
        single = after is not None and after.second is None
        span = self._span(after.site) if after is not None and single else None
        near = span if rivals else None
        condition = self._condition(after.site) if after is not None and single else None
        for edit in self.edits.upto(start) if isinstance(self.edits, Ranked) else self.edits[start:]:
            limit = max_size()
            if limit is None or self.size(edit) <= limit or (edit.op.tier <= _RIVAL_TIER and (
                    (near is not None and self._span(edit.site) == near)
                    or (condition is not None and self._condition(edit.site) is condition))) or (
                    # a part dropped in the statement the find changed (``len(xs)`` for ``len(xs) - 1``, ``n`` for
                    # ``n * 60``): what the fix most often is where the bug was a part added; and a ±1 there
                    # (``(month - 1) // 3`` beside ``month // 4``): the commonest fix of all; judged as rivals
                    edit.op.name in _RIVAL_OPERATORS and span is not None and self._span(edit.site) == span) or (
                    # a recursion's base case returning what it was given (few, and a find's rival wherever it is),
                    # and an off-by-one undone (``range(n - 1)`` → ``range(n)``) wherever it is
                    edit.op.name == "base-case" or (edit.op.name == "drop-operand" and _unit_step(edit))):
                yield edit

    def _condition(self, site: Site) -> ast.expr | None:
        """The condition the site is in (the ``test`` of an ``if``, ``while``, conditional expression or
        ``assert`` within its statement), or ``None``."""
        if site.order not in self._conditions:
            node: ast.AST = site.node
            found: ast.expr | None = None
            while not isinstance(node, ast.stmt) and id(node) in self._parents:
                parent = self._parents[id(node)]
                if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
                    found = parent.test
                    break
                node = parent
            self._conditions[site.order] = found
        return self._conditions[site.order]

    def make(self, edit: Edit, text: bool = True) -> Made | None:
        """The candidate ``edit`` makes, compiled for the target, or ``None`` when it does not compile;
        without ``text``, its text may be left out (``""``: see :meth:`text_of`), which costs a third as much."""
        try:
            if edit.second is None:
                written = self.text_of(edit) if text or self._inplace.needs_text(edit.site) else ""
                function = self._inplace.compile(edit.site, edit.new, written)
                return Made(written, digest(function.__code__), self.size(edit), function)
            else:
                both = splice_both(self.source, self.function, [(edit.site, edit.new),
                                                                (edit.second.site, edit.second.new)])
                if both is None:
                    return None
                function = self.target.compile(both)
                return Made(both, digest(function.__code__), self.size(edit), function)
        except Exception:  # SyntaxError ('break' outside a loop and the like), RecursionError, …
            return None

    def text_of(self, edit: Edit) -> str:
        """The text of the candidate a single ``edit`` makes."""
        return splice(self.source, self.function, edit.site, edit.new)

    def written(self, made: Made) -> Made | None:
        """``made`` if its text compiles to the code it was made with (in place, see :mod:`._inplace`), else
        the candidate its text makes (``None``: none); positions aside, as :func:`digest` compares them."""
        try:
            function = self.target.compile(made.text)
        except Exception:
            return None
        key = digest(function.__code__)
        return made if key == made.key else Made(made.text, key, made.size, function)

    def candidate(self, edit: Edit, text: str, size: int) -> Candidate:
        return Candidate(text, origin="engine", operator=edit.op.name, edit_size=size, line=edit.site.line)

    def candidates(self) -> Iterator[tuple[Candidate, Edit]]:
        """Every distinct compiling candidate of a single edit, in search order, made here."""
        seen = {self.original}
        for edit in self.edits:
            made = self.make(edit)
            if made is None or made.key in seen:
                continue
            seen.add(made.key)
            self.stats.candidates += 1
            yield self.candidate(edit, made.text, made.size), edit

    def edit(self, index: int) -> Edit:
        """An edit by its ``index``: its place in the order, or (negative) in the pairs."""
        return self.edits[index] if index >= 0 else self.couples[-index - 1]


def digest(code: types.CodeType) -> str:
    """What a candidate compiles to, positions left out: equal digests behave alike, however the text
    differs (this also merges ``not a in b`` with ``a not in b``, which the compiler makes one)."""
    return hashlib.blake2b(marshal.dumps(_code_key(code)), digest_size=16).hexdigest()


def _code_key(code: types.CodeType) -> Any:  # a tuple of bytes, str, int and tuples of them (marshal takes it)
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
            code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
            code.co_exceptiontable if hasattr(code, "co_exceptiontable") else b"")


def judge_job(plans: list[Plan], target: Target, checks: Sequence[Check]) -> Callable[..., list[dict[str, Any]]]:
    """The worker's ``"judge"`` job: make the candidates of the edits ``numbers`` of ``plans[-1]`` (or
    take ``source`` as it is) and judge each within ``limit`` seconds; a list of one answer each.

    An answer is ``{"made": False}`` for an edit that does not compile, ``{"made": True, "key", "size",
    "seen": True}`` for one that compiles to a candidate this child judged already in the same
    ``round`` (the host would skip it: it reads answers in search order, and the earlier one comes
    first; ``round=None`` for a candidate judged again after its batch failed: the earlier one may
    have been judged in that batch, whose answers the host never read), else the verdict
    ``{ok, check, reason}`` with ``key``, ``size`` and (if it passed, or
    ``text`` is asked for) the candidate's text.
    """
    judged: dict[int, set[str]] = {}

    def one(number: int | None, source: str | None, round: int | None, limit: float, text: bool) -> dict[str, Any]:
        made: Made | None = Made(source or "", "", 0)
        unrun: frozenset[str] = frozenset()
        limits: dict[str, float] = {}
        cpu_limits: dict[str, float] = {}
        if number is not None:
            plan = plans[-1]
            limits, cpu_limits = plan.limits, plan.cpu_limits
            edit = plan.edit(number)
            made = plan.make(edit, text)
            if made is None:
                return {"made": False}
            if round is not None:
                for old in [r for r in judged if r != round]:
                    del judged[old]
                seen = judged.setdefault(round, {plan.original})
                if made.key in seen:
                    return {"made": True, "key": made.key, "size": made.size, "seen": True}
                seen.add(made.key)
            unrun = plan.unreached(edit)
        assert made is not None
        with known_to_pass(unrun), per_test_limits(limits, time_limit, cpu_limits, cpu_limit):
            verdict = judge_source(target, made.text, checks, limit, made.compiled)
            if verdict["ok"] and number is not None:  # what passed is what the text says, or it is judged again
                if not made.text:
                    made = made._replace(text=plans[-1].text_of(plans[-1].edit(number)))
                written = plans[-1].written(made)
                if written is None:
                    return {"made": False}
                if written is not made:
                    made = written
                    verdict = judge_source(target, made.text, checks, limit, made.compiled)
        return {"made": True, "key": made.key, "size": made.size, "seen": False, **verdict,
                "text": made.text if text or verdict["ok"] else ""}

    def job(numbers: list[int] | None, source: str | None, round: int | None, limit: float,
            text: bool) -> list[dict[str, Any]]:
        if numbers is None:
            return [one(None, source, round, limit, text)]
        return [one(number, None, round, limit, text) for number in numbers]

    return job


def judge_source(target: Target, source: str, checks: Sequence[Check], limit: float,
                 compiled: types.FunctionType | None = None) -> dict[str, Any]:
    """Whether ``source`` passes every check within ``limit`` seconds, and why not: ``{ok, check, reason}``."""
    started = time.monotonic()
    try:
        with time_limit(limit):
            verdict = evaluate(target, source, checks, compiled)
        if not verdict["ok"] and time.monotonic() - started >= limit:  # a check turned the overrun into a failure
            raise Overrun
        return {"ok": bool(verdict["ok"]), "check": str(verdict["check"]), "reason": str(verdict["reason"])}
    except Overrun:
        return {"ok": False, "check": "sandbox", "reason": f"timed out after {limit:.2g}s"}
    finally:
        target.restore()  # the limit may have struck while evaluate was putting the original back


def _unit_step(edit: Edit) -> bool:
    """Whether ``edit`` drops the ``± 1`` of ``x + 1`` or ``x - 1`` (keeping ``x``)."""
    node = edit.site.node
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
        isinstance(node.right, ast.Constant) and type(node.right.value) is int and node.right.value == 1 and \
        edit.new is node.left

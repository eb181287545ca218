"""Judging a fix on the calls the tests make while they run, receivers and all.

Recorded calls cross from the worker that traced them to the host pickled, and a call whose
arguments cannot be pickled is lost: a method of an object that holds a lock or a lambda, or of a
class defined inside a test. Those are most methods of real libraries, so the ``"live"`` job does
the comparison where the objects are: in the judging worker, it runs the tests with a stand-in in
the live function. At each call from the tests (not from inside a run), the stand-in copies the
arguments, receiver included, and runs the reference twice and the fix twice, each on a copy of its
own; then it runs the reference on the real arguments, so the tests go on as on the pristine code.

A run's outcome is what it returned (a generator's or iterator's items, up to :data:`_ITEMS`) or
the type of what it raised, *and* the state of every argument after it (see :mod:`._state`): a
method's effect on ``self`` counts. Calls are compared once per distinct state of their inputs.

After the tests, a method is also judged on receivers crossed with arguments. The receivers are
every state the tests reached: each receiver on entry to a call, as the call left it, and each
object of the owner class as its constructor left it (the tests' own constructor calls, caught
while they ran). The arguments are those of every call of the method, those with an argument
replaced by another reached object of its type, and arguments made from them
(:func:`regrow._checks._inputs.widen`). A function gets the replaced and widened calls only.

Where the fix differs, the two are run again the other way round (fix first); if the reference
then does something else, the copies were not independent and the call is left out. The rows go
back as the judge's rows (see :mod:`._judge`), with the text of each call to show.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import itertools
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..._checks._evaluate import evaluate
from ..._checks._inputs import Call, observe, optional_parameters, widen
from ..._checks._oracles import Check
from ..._target._target import Target
from ._state import Uncopyable, copyable, fresh, render

STAND_IN = "__regrow_judge_stand_in__"
_SAMPLES = 300  # distinct calls compared while the tests run
_CROSSED = 400  # calls made after the tests: receivers crossed with arguments, and widened ones
_SIDES = 30  # distinct receivers, and distinct argument lists, that are crossed
_COPIES = 2000  # calls from the tests copied (to compare on, or as reached receivers), at most
_ITEMS = 1000  # items of a returned generator or iterator that are compared
_CALL_LIMIT = 0.25
_RETRY_LIMIT = 1.0
_TIMEOUT = "timeout"
_SHOWN = 400
_NO_ARGUMENTS = Call((), {})

Inputs = tuple[tuple[Any, ...], dict[str, Any]]


def stand_in_source(target: Target) -> str:
    """A definition of the target that hands every call to the stand-in. It names the original's
    free variables (in code that never runs), so it has the same closure and swaps in as code."""
    code = target.original_code
    free = sorted(set(code.co_freevars))
    keep = f"    if False:\n        ({', '.join(free)},)\n" if free else ""
    call = f"{STAND_IN}(args, kwargs)"
    # Of the original's kind: 3.13 deprecates swapping a plain function's code into a generator or a coroutine.
    if code.co_flags & inspect.CO_ASYNC_GENERATOR:
        return f"async def {target.name}(*args, **kwargs):\n{keep}    async for item in {call}:\n        yield item\n"
    if code.co_flags & inspect.CO_COROUTINE:
        return f"async def {target.name}(*args, **kwargs):\n{keep}    return await {call}\n"
    if code.co_flags & inspect.CO_GENERATOR:
        return f"def {target.name}(*args, **kwargs):\n{keep}    return (yield from {call})\n"
    return f"def {target.name}(*args, **kwargs):\n{keep}    return {call}\n"


class _StandIn:
    """What the live function runs while the tests run: compares, then answers as the reference."""

    def __init__(self, reference: types.FunctionType, fix: types.FunctionType, stop: float, method: bool) -> None:
        self.reference, self.fix, self.stop, self.method = reference, fix, stop, method
        self.active: Callable[..., Any] | None = None  # the version running: calls from inside go to it
        self.rows: list[list[str]] = []
        self.samples: list[Inputs] = []
        self.keys: set[str] = set()
        self.seen = self.uncopyable = self.copies = 0
        self.pool: dict[type, dict[str, Any]] = {}  # receivers as the tests built and left them, by type

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.active is not None:
            return self.active(*args, **kwargs)
        if threading.current_thread() is threading.main_thread():  # the time limits need the main thread
            self.seen += 1
            if len(self.samples) < _SAMPLES and self.seen <= _COPIES and time.monotonic() < self.stop:
                self.sample(args, kwargs)
        self.active = self.reference
        try:
            return self.reference(*args, **kwargs)
        finally:
            self.active = None
            if self.method and args:  # the receiver as the call left it: a state the tests reach
                self.reached(args[0])

    def sample(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            inputs = fresh((args, kwargs))
        except Uncopyable:
            self.uncopyable += 1
            return
        if self.add(inputs):
            self.samples.append(inputs)

    def add(self, inputs: Inputs) -> bool:
        """Compare the two on ``inputs`` unless inputs in the same state were compared already."""
        key = render(inputs)
        if key in self.keys:
            return False
        self.keys.add(key)
        row = self.compare(inputs)
        if row is None:
            self.uncopyable += 1
            return False
        self.rows.append([Call(*inputs).shown()[:_SHOWN], *row])
        return True

    def compare(self, inputs: Inputs) -> list[str] | None:
        try:
            first = self.run(self.reference, inputs, _CALL_LIMIT)
            again = self.run(self.reference, inputs, _CALL_LIMIT) if first != _TIMEOUT else first
            if first == _TIMEOUT or first != again:
                return [first, again, "", ""]
            mine = self.run(self.fix, inputs, _CALL_LIMIT)
            if mine == _TIMEOUT:
                mine = self.run(self.fix, inputs, _RETRY_LIMIT)
            mine_again = self.run(self.fix, inputs, _CALL_LIMIT) if mine == first else mine
            if first != mine or first != mine_again:  # the other way round: copies that share state show here
                self.run(self.fix, inputs, _CALL_LIMIT)
                third = self.run(self.reference, inputs, _CALL_LIMIT)
                if third != first:
                    return [first, third, "", ""]
            return [first, again, mine, mine_again]
        except Uncopyable:
            return None

    def run(self, fn: Callable[..., Any], inputs: Inputs, limit: float) -> str:
        args, kwargs = fresh(inputs)
        box: list[Any] = []

        def once() -> None:  # under observe()'s time limit: the call, and the items of what it returned
            box.append(_drained(fn(*args, **kwargs)))

        self.active = fn
        try:
            outcome = observe(once, _NO_ARGUMENTS, limit)
        finally:
            self.active = None
        if outcome == _TIMEOUT:
            return _TIMEOUT
        head = "returned " + render(box[0]) if box else outcome  # "raised <exception type>"
        return _digest(f"{head}; after: {render((args, kwargs))}")

    def reached(self, value: Any) -> None:
        """Keep a copy of a receiver as a call of the method, or its class's constructor, left it."""
        if threading.current_thread() is not threading.main_thread() or self.active is not None \
                or self.copies >= _COPIES or time.monotonic() >= self.stop:
            return
        kept = self.pool.setdefault(type(value), {})
        if len(kept) < _SIDES:
            self.copies += 1  # a receiver called in a loop as it grows: each copy costs more than the last
            with contextlib.suppress(Uncopyable):
                copied = fresh(((value,), {}))[0][0]
                kept.setdefault(render(copied), copied)

    def cross(self, method: bool, optional: tuple[frozenset[int], frozenset[str]]) -> int:
        """Compare on calls the tests did not make (see the module's text); how many were added."""
        if method:
            seen = [inputs[0][0] for inputs in self.samples if inputs[0]]
            built = [value for kind in dict.fromkeys(map(type, seen)) for value in self.pool.get(kind, {}).values()]
            receivers = _distinct(itertools.chain(seen, built))
            given = _distinct(Call(inputs[0][1:], inputs[1]) for inputs in self.samples if inputs[0])
            shifted = (frozenset(at - 1 for at in optional[0] if at > 0), optional[1])
            tails = [*given, *self.substituted(given), *widen(given, _CROSSED, shifted)]
            made: Iterator[Inputs] = (((receiver, *tail.args), tail.kwargs)
                                      for receiver, tail in _diagonal(receivers, tails))
        else:
            given = _distinct(Call(*inputs) for inputs in self.samples)
            calls = [*self.substituted(given), *widen(given, _CROSSED, optional)]
            made = ((call.args, call.kwargs) for call in calls)
        added = 0
        for inputs in itertools.islice(made, 10 * _CROSSED):
            if added >= _CROSSED or time.monotonic() >= self.stop:
                break
            added += self.add(inputs)
        return added

    def substituted(self, calls: Sequence[Call]) -> list[Call]:
        """Calls with an argument of the owner class replaced by another object of it the tests built."""
        made = []
        for call in calls:
            for at, value in enumerate(call.args):
                for other in self.pool.get(type(value), {}).values():
                    made.append(Call((*call.args[:at], other, *call.args[at + 1:]), call.kwargs))
        return made[: 4 * _SIDES]


def _diagonal(first: Sequence[Any], second: Sequence[Any]) -> Iterator[tuple[Any, Any]]:
    """Every pair, the early items of both sides paired before the late ones of either."""
    for total in range(len(first) + len(second) - 1):
        for at in range(max(0, total - len(second) + 1), min(total + 1, len(first))):
            yield first[at], second[total - at]


@contextlib.contextmanager
def _constructors(owner: type | None, stand_in: _StandIn) -> Iterator[None]:
    """While inside, each object the owner class's constructor finishes (not a subclass's, which
    may go on setting it up) is handed to the stand-in."""
    if owner is None:
        yield
        return
    had = "__init__" in owner.__dict__
    original = next(klass.__dict__["__init__"] for klass in owner.__mro__ if "__init__" in klass.__dict__)

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if type(self).__init__ is init:
            stand_in.reached(self)

    try:
        owner.__init__ = init  # type: ignore[misc]
    except (TypeError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        if had:
            owner.__init__ = original  # type: ignore[misc]
        else:
            delattr(owner, "__init__")


def _distinct(values: Iterator[Any]) -> list[Any]:
    kept: dict[str, Any] = {}
    for value in values:
        if len(kept) >= _SIDES:
            break
        kept.setdefault(render(value), value)
    return list(kept.values())


def _drained(value: Any) -> Any:
    """A generator's or a built-in iterator's items (the first :data:`_ITEMS`); any other value itself."""
    lazy = inspect.isgenerator(value) or (
        isinstance(value, Iterator) and type(value).__module__ in ("builtins", "itertools"))
    if not lazy:
        return value
    items = list(itertools.islice(value, _ITEMS + 1))
    return ("items", items[:_ITEMS], len(items) > _ITEMS)


def _digest(outcome: str) -> str:
    """The outcome as it is sent to the host: its beginning to show, and a hash of all of it."""
    return f"{outcome[:_SHOWN]} #{hashlib.sha256(outcome.encode('utf-8', 'surrogatepass')).hexdigest()[:20]}"


def live_job(target: Target, reference_source: str, checks: Sequence[Check]) -> Callable[[str, float], dict[str, Any]]:
    """The ``"live"`` job for a judging worker: ``fix`` judged for ``budget`` seconds at most, as plain data."""
    method = target.owner is not None
    optional = optional_parameters(target.func)

    def job(fix: str, budget: float) -> dict[str, Any]:
        stop = time.monotonic() + float(budget)
        stand_in = _StandIn(target.compile(reference_source), target.compile(fix), stop, method)
        names = target.func.__globals__
        with copyable():
            names[STAND_IN] = stand_in
            try:
                with _constructors(target.owner, stand_in):
                    verdict = evaluate(target, stand_in_source(target), checks)
            finally:
                names.pop(STAND_IN, None)
            in_tests = len(stand_in.rows)
            crossed = stand_in.cross(method, optional) if stand_in.samples else 0
        return {"rows": stand_in.rows, "seen": stand_in.seen, "in_tests": in_tests, "crossed": crossed,
                "uncopyable": stand_in.uncopyable, "built": sum(map(len, stand_in.pool.values())),
                "tests": "passed" if verdict["ok"] else str(verdict["reason"])}

    return job


def read_live(data: Any) -> dict[str, Any]:
    """A ``"live"`` reply from untrusted plain data (``ValueError`` unless it has the right shape)."""
    if type(data) is not dict or set(data) != {"rows", "seen", "in_tests", "crossed", "uncopyable", "built", "tests"}:
        raise ValueError("not a live judgement")
    rows = data["rows"]
    if type(rows) is not list or not all(
            type(row) is list and len(row) == 5 and all(type(item) is str for item in row) for row in rows):
        raise ValueError("a row is a list of five strings")
    if not all(type(data[name]) is int for name in ("seen", "in_tests", "crossed", "uncopyable", "built")) \
            or type(data["tests"]) is not str:
        raise ValueError("a live judgement's counts are ints and its tests a string")
    return data

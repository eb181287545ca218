"""The checks that prove a candidate, and the verdict they reach.

A check is a small callable object: it takes the function under test and raises (``CheckFailed``
with a reason, or whatever the function raised) when the function is wrong. Checks run cheapest
first and the first failure stops the rest; its reason is what the next attempt sees.
"""

from __future__ import annotations

import collections.abc
import contextlib
import contextvars
import copy
import inspect
import itertools
import traceback
import types
import typing
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from .._errors import CheckError
from .._evidence._failure import safe_repr
from .._redact import redact_text
from ._pytest_runner import Suite, open_suite
from ._test_limits import run_test


class CheckFailed(Exception):
    """A check's verdict that the function is wrong; the message is the reason.

    ``location`` is the ``(filename, line)`` where the failure surfaced, when a check knows it.
    """

    def __init__(self, reason: str, location: tuple[str, int] | None = None) -> None:
        super().__init__(reason)
        self.location = location


class Check(Protocol):
    """One oracle; ``cost`` orders checks, cheapest first. While it runs, the candidate is also
    installed into the live function, so tests that import the function by name see it.

    What a check can do besides run is declared, never probed for: ``replayable`` (the host can
    repeat it on a plain-data record of the candidate's results, see ``docs/trust.md``), ``split()``
    (the finest grain it offers, for fault localization) and ``prefer(cost)`` (run its own parts in
    that order). :class:`BaseCheck` gives the defaults: not replayable, itself, its own order.
    """

    name: str
    cost: int
    replayable: bool

    def __call__(self, fn: Callable[..., Any]) -> None: ...

    def split(self) -> Sequence[Check]: ...

    def prefer(self, cost: Mapping[str, float]) -> None: ...


class BaseCheck:
    """The declared capabilities of a check that has none of them (see :class:`Check`)."""

    name: str
    cost: int
    replayable = False

    def split(self) -> Sequence[Check]:
        """The check at its finest grain: itself."""
        return [self]  # type: ignore[list-item]  # a subclass defines __call__

    def prefer(self, cost: Mapping[str, float]) -> None:
        """Its own parts in the order of ``cost``: a check of one part has no order to change."""


MAX_ITEMS = 100_000  # items of a generator a check consumes: an endless one is compared on its prefix


def _call(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """Call ``fn``; a coroutine is run, a generator consumed (its items are the result)."""
    result = fn(*args, **kwargs)
    if inspect.iscoroutine(result):
        result = _run_coroutine(result)
    elif inspect.isgenerator(result):
        result = list(itertools.islice(result, MAX_ITEMS))
    elif inspect.isasyncgen(result):
        result = _run_coroutine(_collect(result))
    return result


async def _collect(items: Any) -> list[Any]:
    collected: list[Any] = []
    async for item in items:
        collected.append(item)
        if len(collected) >= MAX_ITEMS:
            break
    return collected


def _run_coroutine(coroutine: Any) -> Any:
    # asyncio is imported here, not at the top: it doubles regrow's import footprint, and every
    # forked sandbox child pays for the parent's size.
    import asyncio

    return asyncio.run(coroutine)


def _fresh(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Copies of the arguments, so one candidate's mutations do not reach the next."""
    try:
        return copy.deepcopy(args), copy.deepcopy(dict(kwargs))
    except Exception:  # uncopyable arguments (locks, sockets): use them as they are
        return args, dict(kwargs)


class Replay(BaseCheck):
    """Call the function again with the failing call's arguments.

    With a ``verify`` predicate the result must make it return a true value (``False``, ``None``
    and raising all fail). Without any other oracle, a result that contradicts the function's
    return annotation fails too, so a candidate that swallows the error and returns ``None`` from
    a function annotated ``-> float`` is not taken for a fix.
    """

    cost = 0
    replayable = True  # the host can repeat it on a record of the candidate's results

    def __init__(
        self,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        verify: Callable[[Any], object] | None = None,
        returns: Any = inspect.Parameter.empty,
        name: str = "replay",
    ) -> None:
        self.args, self.kwargs, self.verify, self.returns, self.name = args, dict(kwargs), verify, returns, name

    def __call__(self, fn: Callable[..., Any]) -> None:
        args, kwargs = _fresh(self.args, self.kwargs)
        result = _call(fn, args, kwargs)
        if self.verify is not None:
            judge(self.verify, result)
        elif not conforms(result, self.returns):
            raise CheckFailed(f"returned {safe_repr(result)}, which is not a {_type_label(self.returns)}")


class Recorded(BaseCheck):
    """Calls recorded while the function was healthy: a fix must return what they returned.

    This is behaviour to preserve, so it assumes those results were right; it is the user's
    opt-in (``record=``), since recording costs time on healthy calls.
    """

    cost = 5
    name = "recorded"
    replayable = True

    def __init__(self, calls: Sequence[tuple[tuple[Any, ...], Mapping[str, Any], Any]]) -> None:
        self.calls = list(calls)

    def __call__(self, fn: Callable[..., Any]) -> None:
        for args, kwargs, expected in self.calls:
            fresh_args, fresh_kwargs = _fresh(args, kwargs)
            got = _call(fn, fresh_args, fresh_kwargs)
            try:
                same = bool(got == expected)
            except Exception:  # incomparable values: compare what they look like
                same = safe_repr(got) == safe_repr(expected)
            if not same:
                call = [*map(safe_repr, args), *(f"{k}={safe_repr(v)}" for k, v in kwargs.items())]
                shown = redact_text(", ".join(call))
                raise CheckFailed(f"changed a healthy result: ({shown}) returned {redact_text(safe_repr(expected))} "
                                  f"before the failure, {redact_text(safe_repr(got))} now")


def judge(verify: Callable[[Any], object], result: Any) -> None:
    """Apply a ``verify=`` predicate to ``result``; raise :class:`CheckFailed` unless it accepts it."""
    shown = redact_text(safe_repr(result))
    try:
        accepted = verify(result)
    except Exception as exc:
        raise CheckFailed(f"verify raised {type(exc).__name__}: {exc} on result {shown}") from exc
    if accepted is None:
        raise CheckFailed(f"verify returned None on result {shown} (a predicate must return True to accept)")
    if not accepted:
        raise CheckFailed(f"verify rejected the result {shown}")


def conforms(value: Any, annotation: Any) -> bool:
    """Whether ``value`` fits a return annotation (unknown or complex annotations always fit)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation in _ITERATORS:
        return isinstance(value, list)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, getattr(types, "UnionType", typing.Union)):
        return any(conforms(value, arg) for arg in typing.get_args(annotation))
    if origin in _ITERATORS:
        return isinstance(value, list)  # a generator's items, as a check consumed them
    if isinstance(origin, type):
        return isinstance(value, origin)
    return True


_ITERATORS = (collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator,
              collections.abc.AsyncIterator, collections.abc.AsyncIterable, collections.abc.AsyncGenerator)


def _type_label(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation)


def annotation_oracle(func: types.FunctionType, verify: object, tests: Sequence[object]) -> Any:
    """The return annotation, used as an oracle only where the user gave none of their own."""
    return inspect.Parameter.empty if verify is not None or tests else return_annotation(func)


def return_annotation(func: types.FunctionType) -> Any:
    """The resolved return annotation of ``func`` (``Parameter.empty`` when absent or unresolvable)."""
    try:
        return typing.get_type_hints(func).get("return", inspect.Parameter.empty)
    except Exception:
        return inspect.Parameter.empty


class TestCallable(BaseCheck):
    """A user test: a callable that takes the function and raises (usually ``AssertionError``) when it is wrong."""

    __test__ = False
    cost = 10
    replayable = True

    def __init__(self, test: Callable[[Callable[..., Any]], object]) -> None:
        self.test = test
        self.name = f"test:{getattr(test, '__name__', repr(test))}"

    def __call__(self, fn: Callable[..., Any]) -> None:
        try:
            result = self.test(fn)
            if inspect.iscoroutine(result):
                _run_coroutine(result)
        except AssertionError as exc:
            raise CheckFailed(_assertion_text(exc)) from exc


def _assertion_text(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    line = frames[-1].line if frames else ""
    message = str(exc).strip()
    return redact_text(" — ".join(part for part in (line, message) if part) or "assertion failed")


_KNOWN: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("regrow_known_to_pass", default=frozenset())


@contextlib.contextmanager
def known_to_pass(names: Collection[str]) -> Iterator[None]:
    """Within: the checks and pytest tests ``names`` count as passed without being run. The engine's
    reuse of the original's verdicts, for tests that never reach the code a candidate changes."""
    token = _KNOWN.set(frozenset(names))
    try:
        yield
    finally:
        _KNOWN.reset(token)


def passes_unrun(name: str) -> bool:
    """Whether the check or test ``name`` is known to pass here (see :func:`known_to_pass`)."""
    return name in _KNOWN.get()


class PytestTests(BaseCheck):
    """Pytest node ids (``tests/test_x.py::test_name``) or test files, run in-process against the
    candidate installed into the live function, as the tests import it.

    The suite is collected once (see :mod:`regrow._checks._pytest_runner`) and each call runs the
    collected tests again, the one that failed last first, stopping at the first failure.
    """

    __test__ = False
    cost = 100

    def __init__(self, node_ids: Sequence[str], rootdir: str | Path | None = None) -> None:
        if not node_ids:
            raise CheckError("no pytest node ids given")
        for node in node_ids:
            path = Path(node.split("::", 1)[0])
            if not path.exists():
                raise CheckError(f"test file not found: {path}")
        self.node_ids = list(node_ids)
        self.rootdir = Path(rootdir) if rootdir else None
        self.name = "pytest:" + ",".join(self.node_ids)
        self._order: list[str] | None = None

    def _suite(self) -> Suite:
        return open_suite(self.node_ids, self.rootdir)

    def collect(self) -> list[str]:
        """The test ids the node ids select; a :class:`CheckError` when one does not exist."""
        ids = self._suite().ids
        if not ids:
            raise CheckError(f"{' '.join(self.node_ids)} selects no tests")
        return ids

    def split(self) -> list[SingleTest]:
        """One check per collected test, for per-test evidence (fault localization)."""
        suite = self._suite()
        return [SingleTest(suite, nodeid) for nodeid in suite.ids]

    def prefer(self, cost: Mapping[str, float]) -> None:
        """Run the tests by ``cost``, lowest first (node id to a cost; equal costs and unknown ones, last,
        keep their order): a candidate stops at its first failing test, so likely failures first save the rest."""
        ids = self._order if self._order is not None else self._suite().ids
        self._order = sorted(ids, key=lambda nodeid: cost.get(nodeid, float("inf")))

    def __call__(self, fn: Callable[..., Any]) -> None:
        suite = self._suite()
        if self._order is None or len(self._order) != len(suite.ids):  # (whole, whatever interrupted a reorder)
            self._order = list(suite.ids)
        passed = 0
        for nodeid in list(self._order):
            if passes_unrun(nodeid):
                passed += 1
                continue
            result = run_test(suite, nodeid)
            if not result.passed:
                # Run first next time: a candidate that fails usually fails where the last one did. One assignment:
                # a time limit's interrupt between a remove and an insert lost the test from the order, and every
                # later candidate in that worker failed with "no test ran" (a right fix too; the outcome varied).
                self._order = [nodeid, *(other for other in self._order if other != nodeid)]
                raise CheckFailed(result.reason, result.location)
            passed += not result.skipped
        if not passed:
            raise CheckFailed(f"no test of {' '.join(self.node_ids)} ran (all skipped or none collected)")


class SingleTest(BaseCheck):
    """One collected pytest test as a check of its own."""

    __test__ = False
    cost = 100

    def __init__(self, suite: Suite, nodeid: str) -> None:
        self.suite, self.name = suite, nodeid

    def __call__(self, fn: Callable[..., Any]) -> None:
        result = run_test(self.suite, self.name)
        if not result.passed:
            raise CheckFailed(result.reason, result.location)

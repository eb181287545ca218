"""``unittest`` tests run without pytest's per-test protocol while candidates are judged.

Through pytest's protocol a ``unittest.TestCase`` test costs its setup, call and teardown reports, and
each ``subTest`` of it a report of its own through every plugin's hooks (the terminal reporter's
included): on a library's test whose body takes 1 ms, 5-7 ms of CPU per run. A test that needs
nothing of pytest — no marks, no fixture but the ``setUpClass`` stand-in pytest adds to every
unittest class, no ``setUpClass``/``tearDownClass``/``setUpModule`` of its own, not async — is run
here as ``unittest`` itself runs it: ``TestCase(name).run(result)``, ``setUp``, ``tearDown`` and the
cleanups included. While candidates are screened the result stops at the first failure (``failfast``:
a failed subtest ends the test, as it already ends the candidate's verdict); the localization run
runs every subtest (the lines the later ones reach count).

The outcome is the same as pytest's: passed, skipped (``skipTest``, ``@skip``, an expected failure), failed (a failure,
an error, a failed subtest or an unexpected success). Only the failure's text differs: the first
exception's line, with the subtest's label, instead of pytest's report (runs that want the whole
report, ``Suite.run(detail=True)``, still go through the protocol).
"""

from __future__ import annotations

import inspect
import sys
import unittest
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import Any

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Failed(Exception):
    """How a directly run unittest test failed: ``label`` (a subtest's, or ``""``), the ``error`` itself."""

    def __init__(self, label: str, error: BaseException) -> None:
        super().__init__(label)
        self.label = label
        self.error = error


class Skipped(Exception):
    """The test was skipped (``reason``)."""


class _FirstFailure(unittest.TestResult):
    """A result that keeps the first failure's exception object (not its formatted text); with ``failfast``
    a failed subtest ends the test (unittest's own rule)."""

    def __init__(self, failfast: bool) -> None:
        super().__init__()
        self.failfast = failfast
        self.first: Failed | None = None
        self.skip: str | None = None

    def _keep(self, label: str, err: _ExcInfo | None) -> None:
        if self.first is None and err is not None and err[1] is not None:
            self.first = Failed(label, err[1])

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        self._keep("", err)

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        self._keep("", err)

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase, err: Any) -> None:
        if err is not None:
            self._keep(_label(subtest), err)

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self.skip = reason

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        self.skip = "expected failure"  # pytest reports it as xfailed, a kind of skip

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        if self.first is None:
            self.first = Failed("", AssertionError("unexpected success (the test is marked expectedFailure)"))


def _label(subtest: unittest.TestCase) -> str:
    describe = getattr(subtest, "_subDescription", None)
    try:
        return f" {describe()}" if callable(describe) else ""
    except Exception:
        return ""


def unittest_call(item: Any) -> Callable[[bool], None] | None:
    """A way to run ``item`` (a pytest item) as unittest runs it, or ``None`` when it needs pytest's protocol.

    The callable, given ``failfast``, returns when the test passed, raises :class:`Skipped` when it was
    skipped and :class:`Failed` (the first failure) when it failed."""
    cls = getattr(item, "cls", None)
    if cls is None or not isinstance(cls, type) or not issubclass(cls, unittest.TestCase):
        return None
    if issubclass(cls, unittest.IsolatedAsyncioTestCase) or not _plain_class(cls):
        return None
    if not _plain_module(sys.modules.get(cls.__module__)):
        return None
    if any(True for _ in item.iter_markers()):
        return None
    stand_in = {"request", f"_unittest_setUpClass_fixture_{cls.__qualname__}"}
    if any(name not in stand_in for name in getattr(item, "fixturenames", ())):
        return None  # an autouse fixture, pytest's setup_method, …
    name = str(getattr(item, "originalname", None) or getattr(item, "name", ""))
    method = getattr(cls, name, None)
    if method is None or inspect.iscoroutinefunction(method):
        return None

    def call(failfast: bool) -> None:
        result = _FirstFailure(failfast)
        cls(name).run(result)
        if result.first is not None:
            raise result.first
        if result.skip is not None:
            raise Skipped(result.skip)

    return call


def _plain_class(cls: type[unittest.TestCase]) -> bool:
    """Neither ``setUpClass`` nor ``tearDownClass`` of its own (pytest runs them once per class)."""
    base = unittest.TestCase
    return all(getattr(getattr(cls, hook), "__func__", None) is getattr(base, hook).__func__
               for hook in ("setUpClass", "tearDownClass"))


def _plain_module(module: ModuleType | None) -> bool:
    """No module-level setup of unittest's or pytest's kind (run once per module by pytest)."""
    if module is None:
        return False
    return not any(hasattr(module, hook) for hook in ("setUpModule", "tearDownModule", "setup_module",
                                                      "teardown_module"))

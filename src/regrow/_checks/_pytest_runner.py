"""Pytest tests collected once and then run many times in this process.

Starting pytest costs a quarter of a second; calling an already collected test function costs
microseconds. A :class:`Suite` configures pytest and collects once, then runs single tests on
demand: plain test functions (no fixtures other than direct ``parametrize`` arguments, no marks
that change the outcome) are called directly, everything else goes through pytest's own
setup/call/teardown protocol. The live function objects the tests imported are shared with
regrow, so a candidate swapped into ``__code__`` is what the tests call.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import dataclasses
import inspect
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._errors import CheckError
from .._redact import redact_text
from .._sandbox import SandboxTimeout

_SLOW_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})


@dataclasses.dataclass(frozen=True)
class TestResult:
    """How one test went; ``reason`` says why it failed (``"<node id> failed: <first line>"``)."""

    __test__ = False
    nodeid: str
    passed: bool
    reason: str = ""
    location: tuple[str, int] | None = None
    skipped: bool = False
    # Where it stopped when that was not the test's own body: "setup" or "teardown" (a fixture's error,
    # which pytest reports as ERROR) or "timeout" (it did not finish); "" otherwise.
    stage: str = ""
    # Asked for with ``Suite.run(detail=True)``: the failure's whole text (pytest's assertion
    # explanation; not redacted, as the caller bounds it first) and, for a direct call, the
    # exception itself (for its traceback).
    detail: str = ""
    error: BaseException | None = dataclasses.field(default=None, repr=False, compare=False)


class CollectionError(CheckError):
    """The tests could not be collected; ``exceptions`` are the errors the collection raised (for
    telling a target that cannot be imported from a test file that is broken)."""

    def __init__(self, message: str, exceptions: Sequence[BaseException] = ()) -> None:
        super().__init__(message)
        self.exceptions = list(exceptions)


class _CollectErrors:
    """A pytest plugin that keeps the collection errors, which pytest would otherwise only print."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.exceptions: list[BaseException] = []

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            lines = str(report.longrepr).strip().splitlines() or ["collection failed"]
            self.errors.append(redact_text(f"{report.nodeid}: {lines[-1]}"))

    def pytest_exception_interact(self, node: Any, call: Any, report: Any) -> None:
        from _pytest.reports import CollectReport

        if isinstance(report, CollectReport) and call.excinfo is not None:
            self.exceptions.append(call.excinfo.value)


class _Subtests:
    """A pytest plugin that keeps the failed subtest reports of the test being run.

    ``unittest`` ``subTest`` failures (and the ``subtests`` fixture's) are reported on their own, through
    ``pytest_runtest_logreport``, while the test's own call report passes: otherwise called green."""

    def __init__(self) -> None:
        self.failed: list[Any] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed and getattr(report, "context", None) is not None:
            self.failed.append(report)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


class Suite:
    """A pytest configuration with its tests collected, kept open to run them again and again."""

    def __init__(self, node_ids: Sequence[str], rootdir: Path | None, options: Sequence[str] = ()) -> None:
        self.pid = os.getpid()  # the process that opened it, the one that closes it (see close)
        try:
            import pytest
            from _pytest.config import _prepareconfig
        except ImportError as exc:
            raise CheckError("pytest node ids need pytest: pip install 'regrow[pytest]'") from exc
        errors = _CollectErrors()
        self._subtests = _Subtests()
        root = ["--rootdir", str(rootdir)] if rootdir else []
        # -s: the runner captures output itself; the terminal reporter would hold on to our stdout.
        args = [*node_ids, *root, *options, "-q", "-s", "-p", "no:cacheprovider", "-p", "no:faulthandler",
                "--no-header"]
        self._lock = threading.Lock()
        with _quiet():
            try:
                self.config = _prepareconfig(args, plugins=[errors, self._subtests])
                self.config._do_configure()
                self.session = pytest.Session.from_config(self.config)
                self.config.hook.pytest_sessionstart(session=self.session)
                self.config.hook.pytest_collection(session=self.session)
            except KeyboardInterrupt:
                self.close()
                raise
            except BaseException as exc:  # a usage error, a missing node id, a broken conftest, sys.exit() at import
                self.close()
                # A node id in a file that cannot be imported is "not found" to pytest: name the real cause.
                cause = f"collection error in {'; '.join(errors.errors)}" if errors.errors else _line(exc)
                raise CollectionError(f"cannot collect {' '.join(node_ids)}: {cause}",
                                      [*errors.exceptions, exc]) from exc
        if errors.errors:
            self.close()
            raise CollectionError(f"cannot collect {' '.join(node_ids)}: collection error in "
                                  f"{'; '.join(errors.errors)}", errors.exceptions)
        self.items = {item.nodeid: item for item in self.session.items}
        self._direct = {nodeid: _direct_call(item) for nodeid, item in self.items.items()}
        # unittest tests that need nothing of pytest, run as unittest runs them (for verdicts only: see run). Where
        # nothing imported unittest no test is a TestCase: not imported for them (as pytest does not, issue 26).
        self._unittest = _unittest_calls(self.items, self._direct) if "unittest" in sys.modules else {}

    @property
    def ids(self) -> list[str]:
        return list(self.items)

    def direct(self, nodeid: str) -> bool:
        """Whether ``nodeid`` runs (for a verdict) without pytest's protocol: no fixture to set up."""
        return self._direct.get(nodeid) is not None or nodeid in self._unittest

    def run(self, nodeid: str, *, detail: bool = False, failfast: bool = False) -> TestResult:
        """Run one collected test against whatever code the live functions have now.

        ``detail`` keeps the whole failure in the result (costly: for evidence, not for verdicts).
        ``failfast`` may end the test at its first failed subtest (for a verdict only: the run tells
        less of the lines the test reaches).
        """
        direct = self._direct[nodeid]
        with _quiet():
            if direct is not None:
                return _run_direct(nodeid, direct, detail)
            if not detail and nodeid in self._unittest:
                return _run_unittest(nodeid, self._unittest[nodeid], failfast)
            return self._run_protocol(nodeid, detail)

    def _run_protocol(self, nodeid: str, detail: bool = False) -> TestResult:
        from _pytest.runner import SetupState, runtestprotocol

        item = self.items[nodeid]
        with self._lock:
            self._subtests.failed.clear()
            option, style = self.config.option, getattr(self.config.option, "tbstyle", "auto")
            if not detail:  # a failure's whole text is not read: pytest need not find each frame's source
                option.tbstyle = "line"
            try:
                reports = runtestprotocol(item, log=False, nextitem=None)
            except BaseException:
                item.session._setupstate = SetupState()  # an interrupted teardown leaves a stale stack
                raise
            finally:
                option.tbstyle = style
            subtests = list(self._subtests.failed)
            self._subtests.failed.clear()
        for report in [*subtests, *reports]:
            crash = getattr(report.longrepr, "reprcrash", None)
            if report.failed and crash is not None and "SandboxTimeout" in crash.message:
                raise SandboxTimeout  # pytest turned the time limit into a test failure: undo that
            if report.failed:
                message = crash.message if crash is not None else str(report.longrepr)
                location = (str(crash.path), int(crash.lineno)) if crash is not None else None
                text = str(report.longrepr) if detail else ""
                stage = report.when if report.when in ("setup", "teardown") else ""
                return TestResult(nodeid, False, _reason(nodeid + _subtest_label(report), message), location,
                                  detail=text, stage=stage)
        return TestResult(nodeid, True, skipped=any(report.skipped for report in reports))

    def close(self) -> None:
        """Finish and unconfigure it (pytest's cleanups run), never in a forked process: those are its opener's."""
        if not hasattr(self, "config") or self.pid != os.getpid():
            return
        with _quiet(), contextlib.suppress(Exception):
            session = getattr(self, "session", None)
            if session is not None:
                self.config.hook.pytest_sessionfinish(session=session, exitstatus=0)
            self.config._ensure_unconfigure()


def _subtest_label(report: Any) -> str:
    """`` [message] (name=value)`` of a subtest's report, as pytest shows it; ``""`` for a test's own."""
    context = getattr(report, "context", None)
    if context is None:
        return ""
    parts = [f"[{context.msg}]"] if getattr(context, "msg", None) is not None else []
    params = getattr(context, "kwargs", None) or {}
    if params:  # pytest keeps each value's repr already
        parts.append("(" + ", ".join(f"{name}={value}" for name, value in params.items()) + ")")
    return " " + (" ".join(parts) or "(<subtest>)")


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _reason(nodeid: str, message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    return redact_text(f"{nodeid} failed: {first}")


def _direct_call(item: Any) -> Callable[[], object] | None:
    """A way to call ``item``'s test function without pytest's protocol, or ``None`` when it needs it."""
    import pytest

    if not isinstance(item, pytest.Function) or item.cls is not None:
        return None
    if any(mark.name in _SLOW_MARKS for mark in item.iter_markers()):
        return None
    if any(mark.kwargs.get("indirect") for mark in item.iter_markers("parametrize")):
        return None
    function = item.obj
    if inspect.iscoroutinefunction(function) or getattr(item, "_isyieldedfunction", lambda: False)():
        return None
    callspec = getattr(item, "callspec", None)
    params: dict[str, Any] = dict(callspec.params) if callspec is not None else {}
    if any(name not in params for name in item.fixturenames):
        return None  # a real fixture (or an autouse one) is involved
    names = list(item._fixtureinfo.argnames)
    if not names:
        return function  # type: ignore[no-any-return]

    def call() -> object:
        try:  # fresh copies: a candidate that mutates its argument must not spoil the next run
            kwargs = copy.deepcopy({name: params[name] for name in names})
        except Exception:
            kwargs = {name: params[name] for name in names}
        return function(**kwargs)

    return call


def _run_direct(nodeid: str, call: Callable[[], object], detail: bool = False) -> TestResult:
    from _pytest.outcomes import Skipped

    try:
        call()
    except SandboxTimeout:
        raise
    except Skipped:
        return TestResult(nodeid, True, skipped=True)
    except KeyboardInterrupt:  # Ctrl-C while a test runs ends the run, as in pytest's own protocol
        raise
    except BaseException as exc:  # the candidate may raise anything, SystemExit included
        if detail:
            return TestResult(nodeid, False, _reason(nodeid, _describe(exc)), _where(exc),
                              detail=_describe(exc), error=exc)
        return TestResult(nodeid, False, _reason(nodeid, _describe(exc)), _where(exc))
    return TestResult(nodeid, True)


def _unittest_calls(items: dict[str, Any], direct: dict[str, Any]) -> dict[str, Callable[[bool], None]]:
    """The tests among ``items`` that unittest runs as well as pytest's protocol, by node id."""
    from ._unittest_direct import unittest_call

    return {nodeid: call for nodeid, item in items.items()
            if direct[nodeid] is None and (call := unittest_call(item)) is not None}


def _run_unittest(nodeid: str, call: Callable[[bool], None], failfast: bool) -> TestResult:
    """A unittest test run without pytest's protocol (see :mod:`._unittest_direct`)."""
    from ._unittest_direct import Failed, Skipped

    try:
        call(failfast)
    except Skipped:
        return TestResult(nodeid, True, skipped=True)
    except Failed as failed:
        error = failed.error
        if not isinstance(error, (Exception, SystemExit)):  # a time limit's interrupt unittest took for an error
            raise error from None
        return TestResult(nodeid, False, _reason(nodeid + failed.label, _exception_only(error)), _where(error))
    return TestResult(nodeid, True)


def _exception_only(exc: BaseException) -> str:
    """``Type: message``, as pytest's report begins (``traceback`` would build a whole TracebackException)."""
    kind, module = type(exc), type(exc).__module__
    name = kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"
    try:
        message = str(exc)
    except Exception:
        return name
    return f"{name}: {message}" if message else name


def _where(exc: BaseException) -> tuple[str, int] | None:
    """Where ``exc`` was raised (without ``traceback.extract_tb``, which reads source files)."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename, tb.tb_lineno


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "<unprintable>"
    if isinstance(exc, AssertionError):
        return text or "assertion failed"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_suites: dict[tuple[tuple[str, ...], str, str, tuple[str, ...]], Suite] = {}
_suites_lock = threading.Lock()
_options: list[str] = []


def set_options(options: Sequence[str]) -> None:
    """pytest options for every suite collected from now on in this process, beside the node ids.

    The front-ends pass on the options a run was configured with that change what is collected and
    how it is imported (``--import-mode=importlib``, ``-c FILE``, ``-o NAME=VALUE``, ``-p PLUGIN``).
    """
    with _suites_lock:
        _options[:] = list(options)


def open_suite(node_ids: Sequence[str], rootdir: Path | None = None) -> Suite:
    """The collected suite for these node ids, collected on first use and kept for the process."""
    with _suites_lock:
        options = tuple(_options)
        key = (tuple(node_ids), str(rootdir or ""), str(Path.cwd()), options)
        suite = _suites.get(key)
        if suite is None:
            suite = _suites[key] = Suite(node_ids, rootdir, options)
        return suite


@atexit.register
def close_suites() -> None:
    """Unconfigure every open suite (pytest's own cleanups run then)."""
    with _suites_lock:
        suites = list(_suites.values())
        _suites.clear()
    for suite in suites:
        suite.close()


def use_temp_root(root: str) -> None:
    """Make ``tmp_path`` and ``tmpdir`` of every open suite fresh folders under ``root`` (call in a sandboxed
    child before its guard, with ``root`` inside its scratch folder).

    pytest would otherwise make them under a base folder the host may already have chosen, outside
    the scratch folder, and point a best-effort ``<prefix>current`` symlink at each new one: the
    guard refuses symlinks (a way out of the scratch folder), so that step is skipped here.
    """
    with _suites_lock:
        suites = list(_suites.values())
    if not suites:
        return
    import _pytest.pathlib
    import _pytest.tmpdir

    for module in (_pytest.pathlib, _pytest.tmpdir):
        if hasattr(module, "_force_symlink"):
            setattr(module, "_force_symlink", _no_symlink)  # noqa: B010 - a private name of pytest's
    for number, suite in enumerate(suites):
        factory = getattr(suite.config, "_tmp_path_factory", None)
        if factory is not None and hasattr(factory, "_given_basetemp") and hasattr(factory, "_basetemp"):
            factory._given_basetemp = Path(root, f"pytest-{number}")  # made on first use
            factory._basetemp = None


def _no_symlink(*args: object) -> None:
    return None

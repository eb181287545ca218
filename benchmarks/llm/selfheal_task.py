"""One benchmark task through self-heal, the predecessor: ``python selfheal_task.py SPEC.json RESULT.json``.

Run in the task's root, in the bench environment (self-heal-llm 0.5.0 with its OpenAI adapter).
self-heal's own front-ends cannot take these tasks as they are: its CLI and its pytest plugin call
``RepairLoop.run(target)`` with no arguments, so a function with a required parameter fails with
a ``TypeError`` before and after every proposal. So the task is driven the way its decorator
works, ``@repair(tests=[...])`` around a function that fails when called:

1. pytest collects the task's test files in this process (the task's ``pytest.ini`` and
   ``conftest.py`` apply), which imports the target's module under the name the tests use;
2. the tests run once with the target wrapped in a recorder, to learn which tests fail and the
   failing call: in the first failing test, the first call of the target that raised, else the
   last call it made (arguments deep-copied before the call);
3. ``RepairLoop(max_attempts=budget + 1, proposer=OpenAIProposer(model, base_url))`` runs on that
   call, with one test callable that runs the task's test files with pytest, the candidate
   patched in wherever the original is bound (as self-heal's own ``_wrap_pytest_test`` does), and
   raises ``AssertionError`` with the first failing test's report. ``max_attempts`` counts the
   first call too, so ``budget + 1`` allows ``budget`` model calls. Safety is the decorator's
   default (no AST rails): nothing of self-heal's is refused for rails regrow does not have.

The harness adds one thing self-heal lacks: a time limit (``call_seconds``) on each call of the
function and each test run, so that a candidate (or the bug) that never returns fails with a
``TimeoutError`` instead of hanging the task.

The result: ``status`` (``fixed`` when self-heal reported success with a proposal,
``not-fixed``, ``nothing-to-fix``, ``unsupported`` for a target shape this driver cannot swap,
``error``), the chosen call, each attempt's failure and proposal, and the fix's source.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import io
import json
import os
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_REPORT_CHARS = 2000  # of the first failing test's report, in the AssertionError self-heal sees


class Unsupported(Exception):
    """A target this driver cannot swap a candidate into."""


# -- a re-entrant time limit ---------------------------------------------------------------------------------------

_armed = [False]


@contextlib.contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Raise ``TimeoutError`` in this thread after ``seconds``; nested limits defer to the outer one."""
    if _armed[0] or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"{what} did not finish in {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    _armed[0] = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _armed[0] = False


def limited(fn: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with time_limit(seconds, f"the call {fn.__name__}(...)"):
            return fn(*args, **kwargs)

    return call


# -- the target: where it lives, how a candidate is swapped in ----------------------------------------------------

class Slot:
    """The target function and how to put another function in its place (and back)."""

    def __init__(self, module: types.ModuleType, qualname: str) -> None:
        self.module = module
        self.qualname = qualname
        *owners, self.name = qualname.split(".")
        self.owner: Any = module
        for part in owners:
            self.owner = getattr(self.owner, part)
        self.in_class = bool(owners)
        raw = self.owner.__dict__[self.name] if self.in_class else getattr(module, self.name)
        self.raw = raw
        if isinstance(raw, (staticmethod, classmethod)):
            self.kind, func = type(raw).__name__, raw.__func__
        elif isinstance(raw, property):
            if raw.fget is None:
                raise Unsupported(f"{qualname} is a property without a getter")
            self.kind, func = "property", raw.fget
        elif isinstance(raw, types.FunctionType):
            self.kind, func = "function", raw
        else:
            raise Unsupported(f"{qualname} is a {type(raw).__name__}, not a function self-heal can recompile")
        if getattr(func, "__wrapped__", None) is not None:
            raise Unsupported(f"{qualname} is under a wrapping decorator ({type(func).__name__})")
        self.func: types.FunctionType = func

    def wrap(self, fn: Callable[..., Any]) -> Any:
        if self.kind == "staticmethod":
            return staticmethod(fn)
        if self.kind == "classmethod":
            return classmethod(fn)
        if self.kind == "property":
            return property(fn, self.raw.fset, self.raw.fdel, self.raw.__doc__)
        return fn

    @contextlib.contextmanager
    def swapped(self, fn: Callable[..., Any]) -> Iterator[None]:
        """``fn`` in the target's place: on its class, or in every module that binds the original."""
        if self.in_class:
            setattr(self.owner, self.name, self.wrap(fn))
            try:
                yield
            finally:
                setattr(self.owner, self.name, self.raw)
            return
        patched = []
        for mod in list(sys.modules.values()):
            try:
                if mod is not None and getattr(mod, self.name, None) is self.raw:
                    setattr(mod, self.name, fn)
                    patched.append(mod)
            except Exception:
                continue
        try:
            yield
        finally:
            for mod in patched:
                with contextlib.suppress(Exception):
                    setattr(mod, self.name, self.raw)


def forget_shadows(where: Path, root: Path) -> None:
    """Forget a package of the target's name that this process imported from elsewhere, so the tests import
    the task's copy: self-heal's own dependencies import ``idna`` (httpx does), and the tests of the task's
    ``idna`` then ran on the installed one while its file was imported apart (a relative import fails
    there). Those dependencies keep the module objects they hold."""
    package = where.parts[0] if len(where.parts) > 1 else where.stem
    home = root.resolve()
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        file = getattr(sys.modules[name], "__file__", None)
        if file and home not in Path(file).resolve().parents:
            del sys.modules[name]


def find_module(path: Path) -> types.ModuleType:
    """The module the tests imported from ``path``; else ``path`` imported on its own (self-heal's CLI way)."""
    wanted = path.resolve()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve() == wanted:
            return module
    spec = importlib.util.spec_from_file_location(path.stem, wanted)
    if spec is None or spec.loader is None:
        raise Unsupported(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


# -- pytest in this process -------------------------------------------------------------------------------------------

class Reports:
    """A pytest plugin that keeps each test's outcome and the first failure's report."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed: list[str] = []
        self.first_report = ""
        self.current = ""

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.current = nodeid

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            if report.nodeid not in self.failed:
                self.failed.append(report.nodeid)
                if not self.first_report:
                    self.first_report = f"{report.nodeid} ({report.when}):\n{report.longreprtext}"
        elif report.when == "call" and report.passed:
            self.passed.append(report.nodeid)


def run_pytest(tests: list[str], plugin: Reports, *extra: str) -> int:
    import pytest

    # The task's root as rootdir, as regrow bench runs the tests: the same configuration applies.
    # self-heal's own pytest plugin stays out: it is not what runs the tests here, and (imported already)
    # it draws a rewrite warning that a suite with filterwarnings = error would turn into an error.
    args = [*tests, "--rootdir", os.getcwd(), "-q", "-p", "no:cacheprovider", "-p", "no:self_heal", "--tb=short",
            "-W", "ignore::pytest.PytestAssertRewriteWarning", *extra]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        return int(pytest.main(args, plugins=[plugin]))


# -- the task ---------------------------------------------------------------------------------------------------------

def record_failing_call(slot: Slot, tests: list[str], seconds: float) -> tuple[Reports, dict[str, Any] | None]:
    """Run the tests with a recorder in the target's place; the failing call, as described above."""
    calls: list[dict[str, Any]] = []
    reports = Reports()
    original = slot.func

    @functools.wraps(original)
    def recorder(*args: Any, **kwargs: Any) -> Any:
        try:
            saved_args, saved_kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
        except Exception:
            saved_args, saved_kwargs = args, kwargs
        entry = {"test": reports.current, "args": saved_args, "kwargs": saved_kwargs, "raised": None}
        calls.append(entry)
        try:
            return original(*args, **kwargs)
        except Exception as exc:
            entry["raised"] = f"{type(exc).__name__}: {exc}"
            raise

    with slot.swapped(limited(recorder, seconds * 4)):
        run_pytest(tests, reports)
    if not reports.failed:
        return reports, None
    first = reports.failed[0]
    mine = [c for c in calls if c["test"] == first] or [c for c in calls if c["test"] in reports.failed]
    if not mine:
        return reports, None
    raised = [c for c in mine if c["raised"]]
    return reports, (raised[0] if raised else mine[-1])


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from self_heal import RepairLoop
    from self_heal.llm import OpenAIProposer

    task = spec["task"]
    os.chdir(task["root"])
    if task["root"] not in sys.path:
        sys.path.insert(0, task["root"])
    seconds = float(spec.get("call_seconds", 10.0))
    tests = list(task["tests"])
    where, _, qualname = task["target"].partition("::")
    forget_shadows(Path(where), Path(task["root"]))
    collect = Reports()
    run_pytest(tests, collect, "--collect-only")
    slot = Slot(find_module(Path(where)), qualname)
    reports, call = record_failing_call(slot, tests, seconds)
    base: dict[str, Any] = {"failing_tests": reports.failed[:20], "failing_count": len(reports.failed)}
    if not reports.failed:
        return {**base, "status": "nothing-to-fix", "reason": "every test passes in this process"}
    if call is None:
        args: tuple[Any, ...] = ()
        kwargs: dict[str, Any] = {}
        base["call"] = "none recorded in the failing tests: called with no arguments, as self-heal's CLI does"
    else:
        args, kwargs = tuple(call["args"]), dict(call["kwargs"])
        base["call"] = _shown(call)

    def pytest_tests(candidate: Callable[..., Any]) -> None:
        plugin = Reports()
        with slot.swapped(candidate), time_limit(seconds * 6, "the test run"):
            run_pytest(tests, plugin, "-x")
        if plugin.failed:
            raise AssertionError(plugin.first_report[:_REPORT_CHARS])

    pytest_tests.__name__ = "pytest " + " ".join(tests)
    # Each function self-heal calls runs under the time limit: the original here, each recompiled proposal below.
    recompile = RepairLoop._recompile

    def limited_recompile(source: str, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        # In the target's own module globals, as self-heal does with an undecorated target.
        return limited(recompile(source, name, slot.func), seconds)

    RepairLoop._recompile = staticmethod(limited_recompile)  # type: ignore[method-assign]
    proposer = OpenAIProposer(model=spec["model"], base_url=spec["base_url"], api_key="not-needed")
    loop = RepairLoop(max_attempts=int(spec["calls"]) + 1, proposer=proposer)
    target = limited(slot.func, seconds)
    started = time.monotonic()
    result = loop.run(target, args=args, kwargs=kwargs, tests=[pytest_tests])
    attempts = [{"number": a.attempt_number, "failure": f"{a.failure.kind}: {a.failure.error_type}: "
                                                          f"{a.failure.message[:300]}",
                 "proposed": a.proposed_source, "install_error": a.error_after_repair} for a in result.attempts]
    base.update(attempts=attempts, loop_seconds=round(time.monotonic() - started, 3),
                model_calls=sum(1 for a in result.attempts if a.proposed_source is not None or a.error_after_repair))
    winning = next((a.proposed_source for a in reversed(result.attempts) if a.proposed_source), None)
    if result.succeeded and winning is not None:
        return {**base, "status": "fixed", "source": winning}
    if result.succeeded:
        return {**base, "status": "nothing-to-fix",
                "reason": "the failing call and the tests passed before any proposal"}
    last = result.attempts[-1].failure if result.attempts else None
    return {**base, "status": "not-fixed",
            "reason": f"self-heal exhausted its attempts; last failure: {last.error_type}: {last.message[:300]}"
            if last else "no attempt"}


def _shown(call: dict[str, Any]) -> str:
    parts = [_repr(a) for a in call["args"]] + [f"{k}={_repr(v)}" for k, v in call["kwargs"].items()]
    raised = f" -> raised {call['raised']}" if call["raised"] else ""
    return f"{call['test']}: f({', '.join(parts)}){raised}"[:500]


def _repr(value: Any) -> str:
    try:
        return repr(value)[:120]
    except Exception:
        return f"<{type(value).__name__}>"


def main(argv: list[str] | None = None) -> int:
    spec_path, result_path = (argv if argv is not None else sys.argv[1:])[:2]
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    started = time.monotonic()
    try:
        result = run(spec)
    except Unsupported as exc:
        result = {"status": "unsupported", "reason": str(exc)}
    except Exception as exc:
        result = {"status": "error", "reason": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc(limit=-8)}
    result["time"] = round(time.monotonic() - started, 3)
    Path(result_path).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    raise SystemExit(main())

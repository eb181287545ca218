"""One benchmark task, run in a process of its own: ``python -m regrow._cli._bench._task SPEC RESULT``.

The steps, each of which can end the task with a status of its own: load the target
(``bad-target``), collect its tests (``bad-tests``), run them on the buggy version three times
(``nothing-to-fix`` when all pass, ``flaky`` when the runs disagree), run them on the reference
(``reference-fails``), repair (``fixed`` / ``not-fixed``), then judge a fix against the reference
by differential testing on the tests' inputs and inputs made from them (:mod:`._judge`): a fix with
a reference ends ``correct``, ``wrong`` or ``unjudged`` (compared on too few calls to tell).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import os
import re
import runpy
import sys
import time
import traceback
import types
from collections.abc import Iterator, Sequence
from typing import Any

from ..._checks._evaluate import evaluate
from ..._checks._inputs import Call, SealedCall, seal_all
from ..._checks._oracles import Check, PytestTests
from ..._checks._pytest_runner import CollectionError
from ..._checks._spectrum import Spectrum, record, split_checks, trace_job
from ..._errors import RegrowError, TargetError
from ..._evidence._failure import check_failure
from ..._heal._assembly import RepairRequest, run_repair
from ..._heal._options import Options
from ..._proposers._engine import OPERATORS, Engine
from ..._proposers._proposer import Proposer
from ..._result import Budget
from ..._sandbox import InProcessSandbox
from ..._sandbox._warm import Worker
from ..._target._locate import attribute, blame, describe, import_apart, is_path, resolve, split
from ..._target._source import definition
from ..._target._target import Target
from ..._target._unwrap import unwrap
from ._judge import DEFAULT_MIN_CALLS, jobs, judge
from ._live import live_job
from ._manifest import Task
from ._order import Order, order_dependence

_BASELINE_RUNS = 3  # runs of the tests on the buggy version: a test that changes its mind is flaky
_TEST_TIMEOUT = 2.0  # seconds one test may take on the buggy version or the reference
_JUDGE_SECONDS = (5.0, 30.0)  # the least and the most time a judgement gets
_TIERS = {op.name: op.tier for op in OPERATORS}


class Stop(Exception):
    """Ends a task early with a status and a reason."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def run_task(task: Task, proposer: str = "engine", model: str | None = None, timeout: float = 60.0,
             max_candidates: int = 5000, workers: int = 1) -> dict[str, Any]:
    """Run one task in this process (which it changes: cwd, ``sys.path``, imported modules)."""
    started = time.monotonic()
    result: dict[str, Any] = {"name": task.name, "family": task.family, "fixable": task.fixable, "bug": task.bug,
                              "status": "error", "reason": ""}
    try:
        result.update(_run(task, proposer, model, started + timeout, max_candidates, workers))
    except Stop as stop:
        result.update(status=stop.status, reason=str(stop))
    except Exception as exc:
        result.update(status="error", reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=-6))
    result["time"] = round(time.monotonic() - started, 3)
    return result


def _run(task: Task, proposer: str, model: str | None, end: float, max_candidates: int,
         workers: int = 1) -> dict[str, Any]:
    """The task's result; the repair may take 85% of the time until ``end``, the judgement the rest."""
    deadline = end - 0.15 * (end - time.monotonic())
    os.chdir(task.root)
    if task.root not in sys.path:
        sys.path.insert(0, task.root)
    # The tests first (pytest configured as for a run): the target is the module they imported.
    tests = _load_tests(task)
    target = _load_target(task.target)
    reference = _load_reference(target, task.reference) if task.reference else None
    listed = _inputs(task)  # (loaded now: a bad inputs= stops the task before its repair, not after)
    with _worker(target, tests, reference) as worker:
        baseline, order = _baseline(split_checks([tests]), worker)
        if reference is not None:
            _check_reference(worker, len(baseline.runs))
        # Tests that read state others left: every candidate is judged in a fresh child.
        proposers = _proposers(proposer, model, fresh=order is not None)
        result = _repair(target, tests, baseline, proposers, deadline, max_candidates, workers)
        if order is not None:
            result["order"] = order.describe()
        if result["status"] in ("fixed", "abstained") and reference is not None:
            low, high = _JUDGE_SECONDS
            budget = min(max(end - time.monotonic(), low), high)
            min_calls = DEFAULT_MIN_CALLS if task.min_calls is None else task.min_calls
            given = _given(baseline.calls(), listed)
            verdict = judge(worker, result.pop("source"), given, min_calls, budget)
            if result["status"] == "fixed":
                result.update(verdict)
            else:  # what abstaining cost (a correct fix not installed) or saved (a wrong one)
                result["abstained_best"] = {key: verdict[key] for key in ("status", "counterexample", "reason")
                                            if key in verdict}
    result.pop("source", None)
    return result


def _worker(target: Target, tests: PytestTests, reference: tuple[str, types.FunctionType] | None) -> Worker:
    """A worker that runs the tests on the buggy version and the reference, and judges a fix.

    Jobs take and return plain data (recorded calls travel sealed); only tracing is trusted.
    """
    fine = split_checks([tests])
    ref_source, ref = reference or ("", None)

    def on_reference() -> dict[str, Any]:
        try:
            verdict = evaluate(target, ref_source, [tests])
            return {"ok": bool(verdict["ok"]), "reason": str(verdict["reason"])}
        finally:
            target.restore()

    if ref is not None and target.owner is not None:
        # A method's reference runs as a method of the task's own class: its super() and the classes it
        # makes are the ones the fix sees (the pristine copy's class is another class of the same name).
        ref = target.compile(ref_source)
    judging = {**jobs(target, ref), "live": live_job(target, ref_source, [tests])} if ref is not None else {}
    return Worker({"trace": trace_job(target, fine, _TEST_TIMEOUT), "reference": on_reference, **judging},
                  trusted={"trace"})


def _repair(target: Target, tests: PytestTests, baseline: Spectrum, proposers: list[Proposer], deadline: float,
            max_candidates: int, workers: int = 1) -> dict[str, Any]:
    failing = baseline.failing[0]
    failure = check_failure("test", target.func, failing.reason, lineno=failing.failing_line)
    budget = Budget(max_candidates=max_candidates, timeout=max(deadline - time.monotonic(), 1.0),
                    candidate_timeout=max(2.0, 20 * baseline.passing_time()), jobs=workers)
    # The one assembly, as the command runs it: the tests are the oracle, a model's candidates are proven
    # in the default sandbox, the engine's edits in process.
    options = Options(proposers=tuple(proposers), budget=budget, engine_sandbox=InProcessSandbox())
    outcome = run_repair(RepairRequest(target, failure, (tests,), options, oracle=True, install=False))
    stats = next((p.last_stats.as_dict() for p in proposers if isinstance(p, Engine)), {})
    result: dict[str, Any] = {"engine": stats, "candidates": stats.get("evaluated", 0) or outcome.candidates,
                              "session_candidates": outcome.candidates,
                              "candidates_per_second": stats.get("per_second") if stats.get("evaluated") else None}
    if not outcome.ok and outcome.ambiguous is not None:  # judged as if the best ranked had been installed
        return {**result, "status": "abstained", "reason": outcome.reason,
                "ambiguous": outcome.ambiguous.to_plain(), "source": outcome.ambiguous.candidates[0]}
    if not outcome.ok or outcome.fix is None:
        return {**result, "status": "not-fixed", "reason": outcome.reason}
    fix = outcome.fix
    return {**result, "status": "fixed", "patch": outcome.diff, "operator": fix.operator, "via": fix.via,
            "tier": _TIERS.get(fix.operator), "note": fix.note, "confidence": _confidence(fix.note),
            "edit_size": fix.edit_size, "source": fix.source}


def _load_target(ref: str) -> Target:
    try:
        return Target.from_ref(ref)
    except Exception as exc:
        raise _bad_target(ref, exc) from exc


def _bad_target(ref: str, exc: BaseException) -> Stop:
    cause = exc.__cause__ if isinstance(exc, TargetError) else exc
    if isinstance(cause, SyntaxError):
        return Stop("bad-target", f"syntax error in {cause.filename or ref}, line {cause.lineno}: {cause.msg}")
    return Stop("bad-target", str(exc) if isinstance(exc, TargetError) else f"cannot load {ref}: {describe(exc)}")


def _load_tests(task: Task) -> PytestTests:
    try:
        tests = PytestTests(task.tests, rootdir=task.root)
        tests.collect()
    except CollectionError as exc:  # tests that import a target that cannot be imported: the target's fault
        blamed = blame(split(task.target)[0], exc.exceptions)
        raise (_bad_target(task.target, blamed) if blamed else Stop("bad-tests", str(exc))) from exc
    except Exception as exc:
        raise Stop("bad-tests", str(exc)) from exc
    return tests


def _baseline(checks: list[Check], worker: Worker) -> tuple[Spectrum, Order | None]:
    """The tests' verdicts on the buggy version, run several times; the first run's evidence, and what
    re-runs in fresh processes showed of tests that changed their verdict (see :mod:`._order`)."""
    runs = [record(checks, worker, _TEST_TIMEOUT) for _ in range(_BASELINE_RUNS)]
    verdicts = [{run.check: run.passed for run in spectrum.runs} for spectrum in runs]
    changed = sorted(name for name in verdicts[0] if len({v.get(name) for v in verdicts}) > 1)
    order = order_dependence(checks, worker, changed, _TEST_TIMEOUT) if changed else None
    if order is not None and order.flaky:
        raise Stop("flaky", f"{len(order.flaky)} test(s) changed verdict between identical runs, also alone in a "
                            f"fresh process: {', '.join(order.flaky)}")
    first = runs[0]  # the first round ran in a fresh child, in the suite's order: as pytest runs it
    if not first.failing:
        raise Stop("nothing-to-fix", f"all {len(first.runs)} tests pass on the buggy version")
    return first, order


def _load_reference(target: Target, reference: str) -> tuple[str, types.FunctionType]:
    try:
        return _reference_source(target, reference)
    except Stop:
        raise
    except Exception as exc:
        raise Stop("bad-target", f"cannot load the reference {reference}: {type(exc).__name__}: {exc}") from exc


def _reference_source(target: Target, reference: str) -> tuple[str, types.FunctionType]:
    """The reference's definition, renamed to the target's name, and the reference function.

    A reference given by path is imported under a private name with its package (see
    :func:`regrow._target._locate.import_apart`): it may live in a pristine copy of the target's own package.
    """
    where, qualname = split(reference)
    found = attribute(import_apart(where), qualname) if is_path(where) else resolve(reference)
    try:  # through classmethod, staticmethod, property, lru_cache and decorator objects to the def
        func = unwrap(found, qualname)
    except TargetError as exc:
        raise Stop("bad-target", f"the reference {reference}: {exc}") from exc
    tree = ast.parse(definition(func)[0])
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    node.name, node.decorator_list = target.name, []
    # Names the reference reads from its own module (imports, helpers) must exist beside the target.
    names = {name for code in _codes(func.__code__) for name in code.co_names}
    for name in sorted(names):
        if name in func.__globals__ and name not in target.func.__globals__:
            target.func.__globals__[name] = func.__globals__[name]
    return ast.unparse(node), func


def _inputs(task: Task) -> list[SealedCall]:
    """The manifest's own inputs for the judge (``inputs = "path.py::NAME"``: a list of argument tuples), sealed."""
    if task.inputs is None:
        return []
    where, _, name = task.inputs.rpartition("::")
    try:
        values = runpy.run_path(os.path.join(task.root, where))[name]
    except Exception as exc:
        raise Stop("bad-target", f"cannot load the inputs {task.inputs}: {describe(exc)}") from exc
    if not isinstance(values, (list, tuple)) or not all(isinstance(args, tuple) for args in values):
        raise Stop("bad-target", f"the inputs {task.inputs} must be a list of argument tuples")
    return seal_all([Call(tuple(args), {}) for args in values])


def _given(recorded: Sequence[SealedCall], listed: Sequence[SealedCall]) -> list[SealedCall]:
    """The tests' calls, then the manifest's inputs they do not already hold."""
    given, seen = list(recorded), {call.key for call in recorded}
    for call in listed:
        if call.key not in seen:
            given.append(call)
            seen.add(call.key)
    return given


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _check_reference(worker: Worker, tests: int) -> None:
    status, verdict = worker.call("reference", timeout=_TEST_TIMEOUT * max(tests, 1) + 1.0, read=_read_reference)
    if status == "timeout":
        raise Stop("reference-fails", "the tests hang on the reference")
    if status != "ok":
        raise Stop("reference-fails", f"the tests cannot run on the reference: {verdict}")
    if not verdict["ok"]:
        raise Stop("reference-fails", f"the tests fail on the reference: {verdict['reason']}")


def _read_reference(data: Any) -> dict[str, Any]:
    if type(data) is not dict or type(data.get("ok")) is not bool or type(data.get("reason")) is not str:
        raise ValueError("not a verdict on the reference")
    return data


def _confidence(note: str) -> float | None:
    match = re.search(r"confidence ([0-9.]+)", note)
    return float(match.group(1)) if match else None


def _proposers(name: str, model: str | None, fresh: bool = False) -> list[Proposer]:
    if name == "engine":
        return [Engine(fresh=fresh)]
    llm = llm_proposer(model or "")
    return [llm] if name == "llm" else [Engine(fresh=fresh), llm]


def llm_proposer(model: str) -> Proposer:
    """The LLM proposer for a model string; :class:`RegrowError` when this build or environment has none."""
    try:
        llm = importlib.import_module("regrow._proposers._llm")
    except ImportError as exc:
        raise RegrowError("no LLM proposer in this build (module regrow._proposers._llm is missing)") from exc
    proposer: Proposer = llm.proposer_for(model)
    return proposer


def main(argv: Sequence[str] | None = None) -> int:
    spec_path, result_path = (argv if argv is not None else sys.argv[1:])[:2]
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    # Tests and candidates may print; keep this process's stdout for nothing but errors of the harness.
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        result = run_task(Task.from_dict(spec["task"]), spec["proposer"], spec.get("model"), spec["timeout"],
                          spec["max_candidates"], spec.get("workers", 1))
    with open(result_path, "w", encoding="utf-8") as file:
        json.dump(result, file, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

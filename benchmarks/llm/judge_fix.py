"""Judge a fix that did not come from regrow the way ``regrow bench`` judges its own: ``judge_fix.py SPEC RESULT``.

Run in the task's root, in the bench environment, with the spec ``{"task": {...}, "source": "...",
"timeout": seconds}``. It uses regrow's bench internals (the pinned regrow installed in the bench
environment; nothing of regrow's source is changed) for every step a regrow fix goes through:

1. the task is set up as ``regrow bench`` sets it up: the tests collected with pytest, the
   target loaded from the module they imported, the reference loaded, the tests run three times
   on the buggy version (their calls recorded) and once on the reference;
2. **tests**: the candidate is installed in the live function and the task's whole test files
   run on it in the bench's forked worker (no rails): ``passed`` or the first failure;
3. **proof**: the candidate goes through a regrow ``Session`` as an untrusted proposer's
   candidate, exactly as a model's fix does in ``regrow bench --proposer llm`` (rails, sandbox,
   the host's confirmation): ``proven`` or regrow's reason to refuse it;
4. **judgement**, for a candidate that passes the tests: regrow's differential judge against the
   reference on the tests' recorded calls and inputs made from them: ``correct``, ``wrong`` (with
   the counterexample) or ``unjudged``.

A proposal's source is first made a single definition, as self-heal runs it: self-heal executes
the whole reply (imports and helpers above the function included), regrow compiles one
definition, so top-level statements of the reply are moved to the start of the function's body.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def single_definition(source: str, name: str) -> str:
    """``source`` with its top-level statements moved into the (last) definition of ``name``."""
    tree = ast.parse(source)
    found: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    if found is None:
        raise ValueError(f"no definition of {name} in the proposal")
    moved = [node for node in tree.body if node is not found and not _is_docstring(node)
             and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    moved = [node for node in moved if not (isinstance(node, ast.ClassDef) and found in ast.walk(node))]
    body = list(found.body)
    head = [body.pop(0)] if body and _is_docstring(body[0]) else []
    found.body = [*head, *moved, *body] or [ast.Pass()]
    found.decorator_list = []
    return ast.unparse(ast.fix_missing_locations(found))


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from regrow._cli._bench import _task as bench
    from regrow._cli._bench._judge import DEFAULT_MIN_CALLS, jobs, judge
    from regrow._cli._bench._manifest import Task
    from regrow._candidate import Candidate
    from regrow._checks._spectrum import split_checks, trace_job
    from regrow._sandbox._warm import Worker
    from regrow._checks._evaluate import evaluate

    started = time.monotonic()
    end = started + float(spec.get("timeout", 120.0))
    task = Task.from_dict(spec["task"])
    os.chdir(task.root)
    if task.root not in sys.path:
        sys.path.insert(0, task.root)
    tests = bench._load_tests(task)
    target = bench._load_target(task.target)
    if task.reference is None:
        raise bench.Stop("bad-target", "the task has no reference to judge against")
    ref_source, reference = bench._load_reference(target, task.reference)
    try:
        source = single_definition(spec["source"], target.name)
    except (SyntaxError, ValueError) as exc:
        return {"status": "not-a-fix", "tests": f"the proposal is not a definition of {target.name}: {exc}"}
    fine = split_checks([tests])

    def on_reference() -> dict[str, Any]:
        try:
            verdict = evaluate(target, ref_source, [tests])
            return {"ok": bool(verdict["ok"]), "reason": str(verdict["reason"])}
        finally:
            target.restore()

    def on_candidate(candidate: str) -> dict[str, Any]:
        try:
            verdict = evaluate(target, candidate, [tests])
            return {"ok": bool(verdict["ok"]), "reason": f"{verdict['check']}: {verdict['reason']}"}
        finally:
            target.restore()

    if target.owner is not None:  # as regrow bench does: the reference a method of the task's own class
        reference = target.compile(ref_source)
    worker = Worker({"trace": trace_job(target, fine, bench._TEST_TIMEOUT), "reference": on_reference,
                     "candidate": on_candidate, **jobs(target, reference)}, trusted={"trace"})
    result: dict[str, Any] = {"source": source}
    with worker:
        found = bench._baseline(fine, worker)
        baseline = found[0] if isinstance(found, tuple) else found  # (spectrum, order) since the bench's _order
        bench._check_reference(worker, len(baseline.runs))
        status, verdict = worker.call("candidate", source, timeout=bench._TEST_TIMEOUT * max(len(baseline.runs), 1) + 5,
                                      read=_read_verdict)
        passed = status == "ok" and verdict["ok"]
        result["tests"] = "passed" if passed else (verdict["reason"] if status == "ok" else f"{status}: {verdict}")

        class OneShot:
            name = "self-heal"

            def propose(self, request: Any) -> Iterator[Candidate]:
                yield Candidate(source, origin="self-heal")

        deadline = end - 0.15 * max(end - time.monotonic(), 0.0)
        proof = bench._repair(target, tests, baseline, [OneShot()], deadline, max_candidates=5)
        result["proof"] = "proven" if proof["status"] == "fixed" else proof.get("reason", proof["status"])
        if not passed:
            return {**result, "status": "fails-tests"}
        low, high = bench._JUDGE_SECONDS
        budget = min(max(end - time.monotonic(), low), high)
        min_calls = DEFAULT_MIN_CALLS if task.min_calls is None else task.min_calls
        result.update(judge(worker, source, baseline.calls(), min_calls, budget))
    return result


def _read_verdict(data: Any) -> dict[str, Any]:
    if type(data) is not dict or type(data.get("ok")) is not bool or type(data.get("reason")) is not str:
        raise ValueError("not a verdict")
    return data


def main(argv: list[str] | None = None) -> int:
    spec_path, result_path = (argv if argv is not None else sys.argv[1:])[:2]
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    started = time.monotonic()
    from regrow._cli._bench._task import Stop

    try:
        # Tests and candidates may print; this process's stdout is the harness's log, not theirs.
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            result = run(spec)
    except Stop as stop:
        result = {"status": stop.status, "reason": str(stop)}
    except Exception as exc:
        result = {"status": "error", "reason": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc(limit=-8)}
    result["time"] = round(time.monotonic() - started, 3)
    Path(result_path).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

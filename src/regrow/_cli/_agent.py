"""What regrow's agent front-ends (the MCP server, agent-framework tools) ask of it, as plain data.

Each operation — heal a target against its pytest tests, run the tests, say which lines are most
suspicious, read the ledger — returns a JSON-ready dict. Healing, checking and explaining import the
user's code and run pytest in this process, so a long-lived host (the MCP server) runs each one in a
fresh interpreter: ``python -m regrow._cli._agent`` reads one request as JSON on stdin and writes JSON
lines — progress while it works, then the result — on the stdout it had when it started (what the
user's code and tests print goes to stderr, so it can never corrupt the channel).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._errors import RegrowError
from .._events import Event
from .._proposers._engine import Engine
from .._proposers._proposer import Request
from .._redact import redact_text
from .._settings import ConfigError, configured
from .._store import Store
from ._deliver import UNDELIVERED, Keeping
from ._guard import INTERNAL
from ._history import count, seconds
from ._preflight import check_model
from ._project import TIMEOUT, Prepared, ProjectHeal, collect, project_options, run_heal

Progress = Callable[[int, int, str], None]  # (done, total, message)
_MAX_VERDICTS = 200  # verdicts listed in a result; the count says how many there were in all
_PROGRESS_EVERY = 0.05  # seconds between progress notifications (a passing verdict is always sent)
DEFAULT_STORE = ".regrow/ledger.sqlite"
HEAL_GRACE = 60.0  # seconds past a heal's own budget before its worker is stopped


def heal(target: str, tests: Sequence[str], *, model: str | None = None, apply: bool = False, force: bool = False,
         max_candidates: int | None = None, store: str | None = DEFAULT_STORE, timeout: float | None = None,
         progress: Progress | None = None) -> dict[str, Any]:
    """Heal ``target`` (``path.py::qualname``) until ``tests`` (pytest node ids) pass, as ``regrow heal`` does:
    every verdict, the diff of the fix, and whether it was written (``apply``; ``force``: over uncommitted
    changes, as ``--force``). ``model``, ``max_candidates`` and ``timeout`` not given (``None``) are the
    configuration's (``[tool.regrow]``, ``REGROW_*``), else the command's defaults; ``budget`` in the result
    says which were used. Bad input (a budget below 1, an unknown model) is refused as the command refuses it."""
    out, verdicts = io.StringIO(), list[dict[str, Any]]()
    found: dict[str, Any] = {"target": target, "tests": list(tests), "verdicts": verdicts, "fix": None, "diff": "",
                             "applied": False}
    log = _VerdictLog(verdicts, 0, progress)
    said = _Said(out)  # why a fix was not kept: in the log where it happened, and the result's reason
    try:
        given = _budget(max_candidates, timeout)
        if model is not None:
            check_model(model)
        options = project_options(model=model, store=store or None, on_event=[log], **given)
        log.total = options.budget.max_candidates
        found["budget"] = {"max_candidates": options.budget.max_candidates, "timeout": options.budget.timeout}
        request = ProjectHeal(target, tuple(tests), options, keeping=Keeping(apply=apply, force=force), errors=said)
        prepared = _collect(request, out)
        found["target"] = _name(prepared)
        if prepared.failure is None:
            return _done(found, "nothing to repair" if prepared.status == 0 else "not healable", prepared.status, out)
        found["failing"] = prepared.failure.reason
        status, result = run_heal(request, prepared, out)
    except RegrowError as exc:
        return _done(found, "error", 2, out, error=str(exc))
    found["verdict_count"] = log.count  # every verdict; the list keeps the first _MAX_VERDICTS
    del verdicts[_MAX_VERDICTS:]
    found["reason"] = result.reason
    if result.ok and result.fix is not None:
        fix = result.fix
        found["fix"] = {"origin": fix.origin, "operator": fix.operator, "line": fix.line, "source": fix.source}
        found["diff"] = result.diff
        found["applied"] = apply and status == 0
    if status == UNDELIVERED:  # found and proven, but apply could not write it: the diff stands, and why
        found["reason"] = said.getvalue().strip().removeprefix("regrow: ").replace("--force", "force=true")
        return _done(found, "not kept", status, out)
    return _done(found, "fixed" if result.ok and status == 0 else "not fixed", status, out)


def _budget(max_candidates: int | None, timeout: float | None) -> dict[str, Any]:
    """The budget a call gave; refused as ``regrow heal`` refuses it (``--max-candidates 0``) if it allows no search."""
    given: dict[str, Any] = {}
    for name, value, kind in (("max_candidates", max_candidates, count), ("timeout", timeout, seconds)):
        if value is not None:
            try:
                given[name] = kind(f"{value:g}" if isinstance(value, float) else str(value))
            except argparse.ArgumentTypeError as exc:
                raise RegrowError(f"{name}: {exc}") from None
    return given


def _collect(request: ProjectHeal, out: io.StringIO) -> Prepared:
    """:func:`collect`, for a target and tests inside the project folder (the worker's) only: an agent's call
    reads and writes nothing outside the folder the server was given (``regrow mcp --root``)."""
    root = Path.cwd().resolve()
    for reference in (request.target, *request.tests):
        _inside(root, reference.split("::", 1)[0], reference)
    prepared = collect(request, out)
    _inside(root, prepared.target.filename, request.target)  # a module name (``pkg.mod::f``) found elsewhere
    return prepared


def _inside(root: Path, path: str, reference: str) -> None:
    where = (root / path).resolve()
    if where != root and root not in where.parents:
        raise RegrowError(f"{reference!r} is outside the project folder {root} ({where}); the tools read and "
                          "write only inside it")


def project_folder(root: str | Path) -> Path:
    """The agent tools' project folder, resolved; one that is not a folder is refused at once (bad input)."""
    folder = Path(root).resolve()
    if not folder.is_dir():
        raise RegrowError(f"the project folder {str(root)!r} does not exist or is not a folder")
    return folder


def heal_limit(root: str | Path, timeout: float | None) -> float:
    """The seconds a heal's worker may run in ``root``: its timeout (given, else the configuration's as the
    worker will read it there, else the command's) and a grace for collecting and keeping the fix."""
    if timeout is None:
        try:
            timeout = float(configured(Path(root)).get("timeout", TIMEOUT))
        except ConfigError:  # the worker says what is wrong with it, as its error
            timeout = TIMEOUT
    return timeout + HEAL_GRACE


def run_checks(target: str, tests: Sequence[str]) -> dict[str, Any]:
    """Run ``tests`` once on ``target`` as it is: each test's outcome, and whether it calls the target."""
    out = io.StringIO()
    found: dict[str, Any] = {"target": target, "tests": []}
    try:
        prepared = _collect(ProjectHeal(target, tuple(tests)), out)
    except RegrowError as exc:
        return _done(found, "error", 2, out, error=str(exc))
    found["target"] = _name(prepared)
    found["tests"] = [{"nodeid": seen.nodeid, "passed": seen.result.passed, "reason": seen.result.reason,
                       "calls_target": not seen.blind} for seen in prepared.reach]
    passed = all(seen.result.passed for seen in prepared.reach)
    return _done(found, "passed" if passed else "failed", 0 if passed else 1, out)


def explain_failure(target: str, tests: Sequence[str], *, top: int = 5, timeout: float = 60.0) -> dict[str, Any]:
    """Localize the failure: the ``top`` most suspicious lines of ``target`` with their scores (Ochiai over
    failing and passing tests, nearness to the failing line breaking ties), and the failing tests."""
    out = io.StringIO()
    found: dict[str, Any] = {"target": target, "lines": []}
    try:
        prepared = _collect(ProjectHeal(target, tuple(tests)), out)
        found["target"] = _name(prepared)
        if prepared.failure is None:
            return _done(found, "nothing to explain", prepared.status, out)
        failure, subject = prepared.failure, prepared.target
        request = Request(subject, failure, [], prepared.checks, 1, time.monotonic() + timeout)
        score = Engine().localize(request)
    except RegrowError as exc:
        return _done(found, "error", 2, out, error=str(exc))
    scored = [(round(score(number), 4), subject.def_lineno + number - 1, text.strip())
              for number, text in enumerate(subject.bare_source.splitlines(), start=1)
              if text.strip() and not text.strip().startswith("#")]
    scored.sort(key=lambda item: -item[0])
    lines = [{"line": line, "text": text, "score": value} for value, line, text in scored]
    found.update(lines=lines[:top], failing=failure.reason, failing_line=failure.lineno, file=subject.filename,
                 failing_tests=[seen.nodeid for seen in prepared.reach if not seen.result.passed])
    return _done(found, "explained", 0, out)


def history(store: str | Path = DEFAULT_STORE, target: str | None = None, limit: int = 20) -> dict[str, Any]:
    """The ledger's sessions, newest first: all of them, or those of one function (its qualname, or the
    qualname part of ``path.py::qualname``)."""
    if not Path(store).is_file():
        return {"store": str(store), "sessions": [], "note": "no ledger yet: nothing was healed with this store"}
    qualname = target.rsplit("::", 1)[-1] if target else None
    ledger = Store(store)
    try:
        sessions = ledger.sessions(qualname)
    finally:
        ledger.close()
    return {"store": str(store), "target": qualname, "count": len(sessions), "sessions": sessions[:limit]}


class _Said(io.StringIO):
    """What a heal says on its error stream: kept, and written into its log too, where it happened."""

    def __init__(self, log: io.StringIO) -> None:
        super().__init__()
        self.log = log

    def write(self, text: str) -> int:
        self.log.write(text)
        return super().write(text)


class _VerdictLog:
    """Keeps each verdict as plain data and reports it as progress."""

    def __init__(self, verdicts: list[dict[str, Any]], total: int, progress: Progress | None) -> None:
        self.verdicts, self.total, self.progress = verdicts, total, progress
        self.count, self.reported = 0, 0.0

    def __call__(self, event: Event) -> None:
        if event.type == "verdict" and event.verdict is not None and event.candidate is not None:
            self.count += 1
            verdict = {"number": self.count, "ok": event.verdict.ok, "candidate": event.candidate.describe(),
                       "check": event.verdict.check, "reason": event.verdict.reason}
            if len(self.verdicts) < _MAX_VERDICTS:
                self.verdicts.append(verdict)
            now = time.monotonic()
            if self.progress is not None and (event.verdict.ok or now - self.reported >= _PROGRESS_EVERY):
                self.reported = now
                mark = "PASS" if event.verdict.ok else "FAIL"
                self.progress(self.count, self.total, f"#{self.count} {mark} {event.candidate.describe()}")
        elif event.type in ("session_start", "attempt_start", "exhausted") and self.progress is not None:
            self.progress(self.count, self.total, f"{event.type}: {event.message}"[:200])


def _name(prepared: Prepared) -> str:
    return f"{prepared.target.module}.{prepared.target.qualname}"


def _done(found: dict[str, Any], status: str, code: int, out: io.StringIO, error: str = "") -> dict[str, Any]:
    found.update(status=status, exit_status=code, log=out.getvalue())
    if error:
        found["error"] = error
    return found


# -- the worker: one request in, JSON lines out ------------------------------------------------------
OPERATIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "heal_function": heal, "run_checks": run_checks, "explain_failure": explain_failure,
}


def main() -> int:
    """``python -m regrow._cli._agent``: run one operation from the JSON request on stdin."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # what the code under repair prints goes to stderr, never into the channel
    sys.stdout = sys.stderr
    sys.path.insert(0, os.getcwd())

    def send(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message, default=str) + "\n")
        channel.flush()

    try:
        request = json.loads(sys.stdin.read())
        operation = OPERATIONS[request.pop("op")]
        if operation is heal:
            request["progress"] = lambda done, total, message: send(
                {"type": "progress", "progress": done, "total": total, "message": message})
        result = operation(**request)
    except RegrowError as exc:
        result = {"status": "error", "exit_status": 2, "error": str(exc)}
    except Exception as exc:  # a fault of regrow's own: the call's error, not a worker that ends without a result
        error = f"{type(exc).__name__}: {redact_text(str(exc))[:500]}"
        result = {"status": "error", "exit_status": INTERNAL, "error": error}
    send({"type": "result", "result": result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

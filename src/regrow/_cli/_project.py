"""A heal of a function in a project against its pytest tests: what ``regrow heal`` and the agent tools run.

:class:`ProjectHeal` is the typed request (the target and its tests, the options, what to do with a
fix); :func:`collect` collects the tests, finds the target as they import it and its first failure;
:func:`run_heal` hands the repair to the one assembly (:mod:`._assembly`) and keeps the fix. The
command (:mod:`._cli`) builds a ``ProjectHeal`` from its arguments, the agent tools (:mod:`._agent`)
from theirs, so neither goes through the other.
"""

from __future__ import annotations

import dataclasses
import io
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .._checks._oracles import Check, PytestTests
from .._checks._probe import Reach, SomeTests, probe, prove_in_copy
from .._checks._pytest_runner import CollectionError, Suite, open_suite, set_options
from .._errors import RegrowError, TargetError
from .._events import Event
from .._evidence._failure import Failure, check_failure
from .._heal._assembly import RepairRequest, run_repair
from .._heal._options import Options, make_options
from .._result import Budget, RepairResult
from .._sandbox import InProcessSandbox
from .._settings import configured
from .._target._locate import attribute, blame, describe, is_path, loaded, split
from .._target._target import Target
from ._deliver import UNDELIVERED, Keeping, after_failure, after_fix
from ._display import Display, label, make_display
from ._guard import INTERRUPTED, doing
from ._summary import rows, show

TIMEOUT = 300.0  # seconds for a whole repair against a project's tests
CANDIDATE_TIMEOUT = 10.0  # seconds for one candidate's tests, and for each test on the original


def project_options(**options: Any) -> Options:
    """The options of a heal against pytest tests: ``heal``'s (:func:`regrow._heal._options.make_options`), with a
    longer time budget for a test suite where the configuration (``[tool.regrow]``, ``REGROW_*``) sets none;
    a keyword given here wins over both. A model's candidates are proven in the default sandbox, the engine's
    edits of the user's own code keep the in-process fast path."""
    conf = configured()  # the command's defaults only where the configuration says nothing
    defaults = {name: value for name, value in (("timeout", TIMEOUT), ("candidate_timeout", CANDIDATE_TIMEOUT))
                if name not in conf}
    given = make_options(**{**defaults, **options})
    return dataclasses.replace(given, engine_sandbox=InProcessSandbox())


@dataclasses.dataclass(frozen=True)
class ProjectHeal:
    """Heal ``target`` (``path.py::qualname`` or ``module::qualname``) until ``tests`` (pytest node ids or
    files) pass; ``pytest_args`` go to pytest when it collects and runs them."""

    target: str
    tests: tuple[str, ...]
    options: Options = dataclasses.field(default_factory=project_options)
    rootdir: str | None = None
    pytest_args: tuple[str, ...] = ()
    quiet: bool = False  # only the summary: no phases, no progress
    no_copy: bool = False  # do not prove tests that run the code in a subprocess in a scratch copy
    keeping: Keeping = dataclasses.field(default_factory=Keeping)
    verbose: bool = False  # a line per candidate judged
    log: bool = False  # the plain log even on a terminal
    # When the heal's time budget starts (``time.monotonic()``): ``regrow heal --timeout`` counts from the
    # command's start, so collecting the tests and running them on the original come out of it. None: from
    # the repair's start (the agent tools).
    started: float | None = None
    errors: TextIO | None = None  # where a fix that was not kept says why (None: stderr; an agent's: its result)
    kept_as: list[str] = dataclasses.field(default_factory=list)  # what keeping did: "written", "patch", a PR's status

    def __post_init__(self) -> None:
        if not self.tests:
            raise RegrowError("tests must name at least one pytest node id or test file")


@dataclasses.dataclass
class Prepared:
    """A heal ready to run: the target as the tests import it, what each test did on it, and its first
    failure with the checks a fix must pass (``failure`` is ``None`` when there is nothing to heal, and
    ``status`` is then the exit status)."""

    target: Target
    reach: list[Reach]
    suite: Suite
    failure: Failure | None = None
    checks: list[Check] = dataclasses.field(default_factory=list)
    status: int = 0


def collect(heal: ProjectHeal, out: TextIO) -> Prepared:
    """Collect the tests, find the target they import, run each test once on it and find its first failure."""
    set_options(list(heal.pytest_args))
    where, _ = split(heal.target)
    if is_path(where) and not Path(where).is_file():
        raise TargetError(f"no such file: {where}")
    tests = PytestTests(list(heal.tests), rootdir=heal.rootdir)
    # The tests first, configured as for a pytest run (rootdir, ini file, pythonpath, conftest files,
    # import mode): the module to heal is the one they imported.
    try:
        collected = tests.collect()
    except CollectionError as exc:
        raise blame(where, exc.exceptions) or exc from None
    target = _target(heal.target)
    print(f"regrow: healing {target.module}.{target.qualname} against {len(collected)} tests", file=out)
    suite = open_suite(tests.node_ids, tests.rootdir)
    reach = _probe(heal, suite, target, collected)
    moved = _imported_meanwhile(target, where, reach)
    if moved is not None:  # the tests imported the file themselves, under another name, while they ran
        target = moved
        print(f"regrow: the tests import it as {target.module}; healing {target.module}.{target.qualname}", file=out)
        reach = _probe(heal, suite, target, collected)
    name = f"{target.module}.{target.qualname}"
    for seen in reach:
        if seen.blind and (seen.started or not seen.result.passed):
            print(f"regrow: {seen.describe(name)}", file=out)
    failing = [seen.result for seen in reach if not seen.result.passed and not seen.blind]
    if not failing:
        if any(not seen.result.passed for seen in reach):
            print(f"regrow: no failing test calls {name} in this process: no candidate can be proven "
                  "against them", file=out)
            return Prepared(target, reach, suite, status=1)
        print("regrow: every test passes; nothing to repair", file=out)
        return Prepared(target, reach, suite)
    first = failing[0]
    crash = first.location
    inside = crash is not None and Path(crash[0]).resolve() == Path(target.filename).resolve()
    lineno = crash[1] if inside and crash is not None else None
    failure = check_failure("test", target.func, first.reason, lineno=lineno)
    print(f"regrow: failing: {failure.reason}", file=out)
    seeing = [seen.nodeid for seen in reach if not seen.blind]
    checks: list[Check] = [tests] if len(seeing) == len(reach) else [SomeTests(suite, seeing)]
    if len(seeing) != len(reach):
        print(f"regrow: proving fixes against the {len(seeing)} of {len(reach)} tests that call {name}", file=out)
    return Prepared(target, reach, suite, failure, checks)


def _probe(heal: ProjectHeal, suite: Suite, target: Target, collected: Sequence[str]) -> list[Reach]:
    """Each test once on the original code, noting which runs (named if the test ends the interpreter)."""
    found: list[Reach] = []
    for nodeid in collected:
        doing(f"running {nodeid} on the original code")
        # Each within the candidate timeout and half of what is left of --timeout: a test that hangs on the original
        # must not hold the command past its budget (--timeout 3 ran 22 s with a hanging test), nor leave the
        # search none of it (with --timeout 20 a hanging test took 10 s here and the session the rest).
        limit = min(heal.options.budget.candidate_timeout, _left(heal.options.budget, heal.started).timeout / 2)
        found += probe(suite, target.original_code, [nodeid], timeout=max(limit, _PROBE_LEAST))
    return found


def run_heal(heal: ProjectHeal, prepared: Prepared, out: TextIO) -> tuple[int, RepairResult]:
    """Search for a fix of a prepared heal, prove it, and keep it as asked: the exit status and the result.

    The repair is the one assembly's (:func:`regrow._heal._assembly.run_repair`): the tests are the oracle,
    a model's candidates are proven in the default sandbox, the engine's edits in process. Ctrl-C ends
    it with one line and status 130, before any file is written."""
    failure = prepared.failure
    assert failure is not None
    display = make_display(io.StringIO() if heal.quiet else out, prepared.target, verbose=heal.verbose,
                           log=heal.log or heal.quiet)
    options = dataclasses.replace(heal.options, on_event=(display, _noting, *heal.options.on_event),
                                  budget=_left(heal.options.budget, heal.started))
    kept: list[int] = []
    said = io.StringIO() if heal.quiet else out  # -q: the one-line result, where the fix went, errors on stderr

    def keep(target: Target, result: RepairResult, checks: Sequence[Check]) -> None:
        display.close()
        kept.append(_keep(heal, prepared, target, result, checks, display, said, out))

    try:
        result = run_repair(RepairRequest(prepared.target, failure, tuple(prepared.checks), options, oracle=True,
                                          install=False, keep=keep))
    except KeyboardInterrupt:
        display.close()
        print(f"regrow: interrupted after {display.judged} candidates in {display.elapsed:.1f}s; "
              f"{'no file was changed' if not kept else 'the fix was kept as shown above'}", file=sys.stderr)
        return INTERRUPTED, RepairResult(False, failure.qualname, failure, reason="interrupted")
    finally:
        display.close()
    tests = [seen.nodeid for seen in prepared.reach if not seen.blind]
    judged = max(display.judged, result.candidates + result.screened)
    if not result.ok or result.fix is None:
        if heal.quiet:
            print(f"regrow: no fix for {failure.qualname} after {judged} candidates in {result.duration:.2f}s: "
                  f"{result.reason or 'the search ended without a fix'}", file=out)
        else:
            show(out, rows(prepared.target, result, "no fix", display.judged, tests), "")
        after_failure(heal.keeping, prepared.target, result, options.store, out)  # where it went: even with -q
        return 1, result
    status = kept[0]
    by = f"{label(prepared.target, result.fix)} after {judged} candidates in {result.duration:.2f}s"
    fixed = f"fixed by {by}"
    if heal.quiet:
        outcome = _outcome(heal, status)
        print(f"regrow: {fixed}; {outcome.removeprefix('fixed, ')}" if status == 0 else
              f"regrow: a fix found by {by}; {outcome}", file=out)
        return status, result
    print(f"regrow: {fixed}", file=out)
    show(out, rows(prepared.target, result, _outcome(heal, status), display.judged, tests), result.diff)
    return status, result


def _left(budget: Budget, started: float | None) -> Budget:
    """``budget`` with what is left of its time since ``started`` (never below :data:`_LEAST`: the search
    then stops at once with "time budget spent" instead of the budget being refused as bad input)."""
    if started is None:
        return budget
    left = budget.timeout - (time.monotonic() - started)
    return dataclasses.replace(budget, timeout=max(round(left, 2), _LEAST))


_LEAST = 0.01  # seconds
_PROBE_LEAST = 0.2  # seconds a test gets on the original however little of --timeout is left


def _noting(event: Event) -> None:
    if event.type == "candidate" and event.candidate is not None:
        doing(f"judging the candidate {event.candidate.describe()}")
    elif event.type == "attempt_start":
        doing(f"searching with {event.message}")


def _outcome(heal: ProjectHeal, status: int) -> str:
    """The summary's outcome, from what keeping the fix did (``heal.kept_as``), not from what was asked."""
    keeping, done = heal.keeping, heal.kept_as
    kept = "written" in done or ("patch" in done and keeping.patch is not None) or {"opened", "exists"} & set(done)
    if status == UNDELIVERED and not kept:
        return "fixed, but not kept (see above)"
    if status in (0, UNDELIVERED):
        written = "written to the file" if "written" in done else \
            "the file is unchanged (--apply writes it)" if not keeping.apply else "not written (see above)"
        pulls = {"opened": ", pull request opened", "exists": ", pull request already proposed"}
        said = "fixed, " + written + (", patch written" if "patch" in done and keeping.patch is not None else "") + \
            "".join(pulls.get(status_, "") for status_ in done)
        return said + (", but not all of it was kept (see above)" if status == UNDELIVERED else "")
    return "not fixed: the fix fails the tests that run the code in a subprocess"


def _keep(heal: ProjectHeal, prepared: Prepared, target: Target, result: RepairResult, checks: Sequence[Check],
          display: Display, said: TextIO, out: TextIO) -> int:
    """Prove a fix in a scratch copy for the tests that spawn the code (saying so on ``said``), and keep it
    as asked (saying where it went on ``out``, even with ``-q``)."""
    assert result.fix is not None
    spawning = [seen.nodeid for seen in prepared.reach if seen.blind and seen.started]
    if spawning and not heal.no_copy:
        display.set_phase(f"proving in a scratch copy against the {len(spawning)} tests that run a subprocess")
        doing("proving the fix in a scratch copy")
        proof = prove_in_copy(prepared.suite.config.rootpath, target, result.fix.source, spawning,
                              list(heal.pytest_args), timeout=heal.options.budget.timeout)
        if not proof.passed:
            print(f"regrow: not fixed: with the fix written into a scratch copy of {prepared.suite.config.rootpath}, "
                  f"{len(proof.failed)} of the {len(spawning)} tests that run the code in a subprocess fail there "
                  f"({', '.join(proof.failed)}){': ' + proof.detail if proof.detail else ''}", file=said)
            return 1
        print(f"regrow: the {len(spawning)} tests that run the code in a subprocess pass in a scratch copy with "
              "the fix written in", file=said)
    doing("keeping the fix")
    return after_fix(heal.keeping, target, result, checks, heal.options.store, out, heal.errors, heal.kept_as)


def _imported_meanwhile(target: Target, where: str, reach: list[Reach]) -> Target | None:
    """The target in the module of its file that the tests imported while they ran, if not the one loaded."""
    if not is_path(where) or not any(seen.blind for seen in reach):
        return None
    others = [module for module in loaded(target.filename) if module.__name__ != target.module]
    if not others:
        return None
    others.sort(key=lambda module: (-module.__name__.count("."), module.__name__))
    return _target(f"{where}::{target.qualname}", others[0])


def _target(ref: str, module: types.ModuleType | None = None) -> Target:
    """The target, as a :class:`TargetError` of one line when its module or source is bad input."""
    try:
        return Target.of(attribute(module, split(ref)[1])) if module is not None else Target.from_ref(ref)
    except RegrowError:
        raise
    except (SyntaxError, OSError, ValueError, UnicodeError) as exc:
        raise TargetError(f"cannot read {split(ref)[0]}: {describe(exc)}") from exc



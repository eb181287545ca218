"""The ``regrow`` command: heal a function against its pytest tests from the shell."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ._chain import default_chain
from ._checks import Check, PytestTests
from ._deliver_cli import add_deliver_command, add_heal_options, after_failure, after_fix
from ._engine import Engine
from ._errors import RegrowError, TargetError
from ._events import Event
from ._failure import Failure, check_failure
from ._locate import attribute, blame, describe, is_path, loaded, split
from ._options import default_sandbox
from ._probe import Reach, SomeTests, probe, prove_in_copy
from ._pytest_runner import CollectionError, Suite, open_suite, set_options
from ._result import Budget, RepairResult
from ._sandbox import InProcessSandbox
from ._session import Session
from ._store import Store
from ._target import Target


class _Printer:
    """Renders session events as one line per verdict."""

    def __init__(self, out: TextIO, quiet: bool) -> None:
        self.out = out
        self.quiet = quiet
        color = out.isatty() and "NO_COLOR" not in os.environ
        self.green, self.red, self.dim, self.reset = (
            ("\033[32m", "\033[31m", "\033[2m", "\033[0m") if color else ("", "", "", "")
        )
        self.count = 0

    def __call__(self, event: Event) -> None:
        if event.type == "verdict" and event.verdict is not None and event.candidate is not None:
            self.count += 1
            if self.quiet and not event.verdict.ok:
                return
            mark = f"{self.green}PASS{self.reset}" if event.verdict.ok else f"{self.red}FAIL{self.reset}"
            reason = "" if event.verdict.ok else f" {self.dim}{event.verdict.check}: {event.verdict.reason}{self.reset}"
            print(f"  #{self.count:<4} {mark} {event.candidate.describe()}{reason}", file=self.out)
        elif event.type == "proposer_error":
            print(f"  {self.red}proposer error{self.reset}: {event.message}", file=self.out)


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


def prepare(args: argparse.Namespace, out: TextIO) -> Prepared:
    """Collect the tests, find the target they import, run each test once on it and find its first failure."""
    set_options(args.pytest_args)
    where, _ = split(args.target)
    if is_path(where) and not Path(where).is_file():
        raise TargetError(f"no such file: {where}")
    tests = PytestTests(args.test, rootdir=args.rootdir)
    # The tests first, configured as for a pytest run (rootdir, ini file, pythonpath, conftest files,
    # import mode): the module to heal is the one they imported.
    try:
        collected = tests.collect()
    except CollectionError as exc:
        raise blame(where, exc.exceptions) or exc from None
    target = _target(args.target)
    print(f"regrow: healing {target.module}.{target.qualname} against {len(collected)} tests", file=out)
    suite = open_suite(tests.node_ids, tests.rootdir)
    reach = probe(suite, target.original_code, collected, timeout=args.candidate_timeout)
    moved = _imported_meanwhile(target, where, reach)
    if moved is not None:  # the tests imported the file themselves, under another name, while they ran
        target = moved
        print(f"regrow: the tests import it as {target.module}; healing {target.module}.{target.qualname}", file=out)
        reach = probe(suite, target.original_code, collected, timeout=args.candidate_timeout)
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


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a number of workers, at least 1, not {text!r}")
    return value


def _heal(args: argparse.Namespace, out: TextIO) -> int:
    prepared = prepare(args, out)
    return prepared.status if prepared.failure is None else run_heal(args, prepared, out)[0]


def run_heal(args: argparse.Namespace, prepared: Prepared, out: TextIO) -> tuple[int, RepairResult]:
    """Search for a fix of a prepared heal, prove it, and keep it as asked: the exit status and the result."""
    target, failure, reach, suite = prepared.target, prepared.failure, prepared.reach, prepared.suite
    assert failure is not None
    budget = Budget(max_candidates=args.max_candidates, timeout=args.timeout, candidate_timeout=args.candidate_timeout,
                    jobs=getattr(args, "jobs", None))
    printer = _Printer(out, args.quiet)
    store = Store(args.store) if args.store else None
    proposers = default_chain(args.model) if args.model else (Engine(),)
    # A model's candidates are proven in the same sandbox as @heal's (a guarded fork where the platform
    # has one); the engine's edits, mutations of the user's own code, keep the in-process fast path.
    session = Session(target, failure, prepared.checks, proposers, sandbox=default_sandbox(),
                      engine_sandbox=InProcessSandbox(), budget=budget, on_event=[printer, *args.on_event],
                      store=store)
    result = session.run(install=False)
    if not result.ok or result.fix is None:
        print(f"regrow: no fix found after {max(printer.count, result.candidates)} candidates ({result.reason})",
              file=out)
        after_failure(args, target, result, store, out)
        return 1, result
    # The engine judges its candidates itself and the session proves its best: count what was shown.
    print(f"regrow: fixed by {result.fix.describe()} after {max(printer.count, result.candidates)} candidates "
          f"in {result.duration:.2f}s\n", file=out)
    print(result.diff, file=out, end="" if result.diff.endswith("\n") else "\n")
    spawning = [seen.nodeid for seen in reach if seen.blind and seen.started]
    if spawning and not args.no_copy:
        proof = prove_in_copy(suite.config.rootpath, target, result.fix.source, spawning, args.pytest_args,
                              timeout=args.timeout)
        if not proof.passed:
            print(f"regrow: not fixed: with the fix written into a scratch copy of {suite.config.rootpath}, "
                  f"{len(proof.failed)} of the {len(spawning)} tests that run the code in a subprocess fail there "
                  f"({', '.join(proof.failed)}){': ' + proof.detail if proof.detail else ''}", file=out)
            return 1, result
        print(f"regrow: the {len(spawning)} tests that run the code in a subprocess pass in a scratch copy with "
              "the fix written in", file=out)
    return after_fix(args, target, result, session.checks, store, out), result


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="regrow", description="Repair failing Python functions.")
    commands = parser.add_subparsers(dest="command", required=True)
    heal = commands.add_parser(
        "heal", help="repair a function until its pytest tests pass",
        usage="regrow heal TARGET --test NODE [--test NODE ...] [options] [-- PYTEST_OPTIONS ...]",
        epilog="Options after -- go to pytest when it collects and runs the tests, e.g. -- --import-mode=importlib.")
    heal.add_argument("target", help="path/to/module.py::function (or ::Class.method), or package.module::function")
    heal.add_argument("--test", action="append", required=True, metavar="NODE",
                      help="a pytest node id or test file the fix must pass (repeatable)")
    heal.add_argument("--rootdir", default=None, help="pytest's rootdir (default: found by pytest)")
    heal.add_argument("--max-candidates", type=int, default=2000, help="candidates to try at most (2000)")
    heal.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole repair (300)")
    heal.add_argument("--candidate-timeout", type=float, default=10.0,
                      help="seconds per candidate's tests, and per test on the original (10)")
    heal.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                      help="workers judging candidates at once (default: every core)")
    heal.add_argument("--no-copy", action="store_true",
                      help="do not prove the tests that run the code in a subprocess against a scratch copy of the "
                           "tree with the fix written in")
    heal.add_argument("--model", default=None,
                      help="a model to try after the engine, e.g. openai:gpt-5 (see docs/llm.md)")
    heal.add_argument("-q", "--quiet", action="store_true", help="print only passing verdicts and the result")
    add_heal_options(heal)
    heal.set_defaults(run=_heal, pytest_args=[], on_event=[])
    add_deliver_command(commands)
    serve = commands.add_parser("mcp", help="serve regrow's tools to coding agents over MCP on stdio (docs/agents.md)")
    serve.add_argument("--root", default=".", help="the project folder targets and tests are relative to (.)")
    serve.add_argument("--store", default=None, metavar="PATH",
                       help="the SQLite ledger heals record to and history reads (ROOT/.regrow/ledger.sqlite)")
    serve.set_defaults(run=_mcp)
    bench = commands.add_parser("bench", help="run a benchmark manifest of buggy functions")
    try:
        from ._bench import configure  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # the harness is not part of this build
        bench.set_defaults(run=_no_bench)
    else:
        configure(bench)
    return parser


def _mcp(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from ._mcp import serve
    except ImportError as exc:
        raise RegrowError(f"regrow mcp needs the mcp extra: pip install 'regrow[mcp]' ({exc})") from None
    serve(args.root, args.store)
    return 0


def _no_bench(args: argparse.Namespace, out: TextIO) -> int:
    raise RegrowError("regrow bench is not available in this build")


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``regrow`` console script; returns the exit status."""
    stream = out or sys.stdout
    words = list(sys.argv[1:] if argv is None else argv)
    # ``regrow heal ... -- OPTIONS``: pytest options for collecting and running the tests.
    pytest_args = words[words.index("--") + 1:] if "--" in words else []
    args = _parser().parse_args(words[: words.index("--")] if "--" in words else words)
    if args.command == "heal":
        args.pytest_args = pytest_args
    elif pytest_args:
        _parser().error("only regrow heal takes pytest options after --")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s", stream=sys.stderr)
    sys.path.insert(0, os.getcwd())
    try:
        return int(args.run(args, stream))
    except RegrowError as exc:
        print(f"regrow: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

"""The ``regrow`` command: heal a function against its pytest tests from the shell.

Only the arguments are read here: the heal itself is :mod:`._project`'s (which the agent tools use too).
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from .._errors import RegrowError
from .._version import __version__
from ._deliver import Keeping, add_deliver_command, add_heal_options
from ._display import silence
from ._guard import BROKEN_PIPE, INTERRUPTED, guarded, interrupted
from ._history import add_history_commands, count, seconds
from ._preflight import check_heal
from ._project import CANDIDATE_TIMEOUT, TIMEOUT, ProjectHeal, collect, project_options, run_heal


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a number of workers, at least 1, not {text!r}")
    return value


def _heal(args: argparse.Namespace, out: TextIO) -> int:
    check_heal(args)  # a missing extra, an unknown provider, a file for --patch: before any work
    if out is not sys.stdout:  # called in process with a stream to write to (a test, a tool): no child to lose it
        return _heal_here(args, out)
    return guarded(lambda: _heal_here(args, out))


def _heal_here(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return _run_heal(args, out)
    except RegrowError as exc:
        print(f"regrow: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(interrupted(), file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the output was closed (``| head``): nothing more to say
        silence(out)
        return 1


def _run_heal(args: argparse.Namespace, out: TextIO) -> int:
    # An option not given (None) is the configuration's, or the command's default (see project_options).
    given = {name: value for name, value in (("max_candidates", args.max_candidates), ("timeout", args.timeout),
                                              ("candidate_timeout", args.candidate_timeout),
                                              ("environ", args.environ or None)) if value is not None}
    # A store asked for on the command line is opened now: one that cannot be is bad input (one line, exit 2), where
    # a running app's is reached at its first use and missed with a warning.
    from .._stores._shared import shared

    store = shared(args.store) if args.store else None  # (closed at exit with the others a process shares)
    if store is not None:
        store.reach()
    options = project_options(jobs=args.jobs, model=args.model, store=store, on_event=args.on_event, **given)
    heal = ProjectHeal(args.target, tuple(args.test), options, args.rootdir, tuple(args.pytest_args), args.quiet,
                       args.no_copy, Keeping.from_args(args), verbose=args.verbose, log=args.log,
                       started=args.started)
    held = io.StringIO()  # -q: only the one-line result (errors go to stderr)
    prepared = collect(heal, held if args.quiet else out)
    if prepared.failure is not None:
        return run_heal(heal, prepared, out)[0]
    if args.quiet:  # nothing to heal: the line that says why
        print(held.getvalue().rstrip("\n").rsplit("\n", 1)[-1], file=out)
    return prepared.status


def _parser(command: str | None = "bench") -> argparse.ArgumentParser:
    """The command's parser; the bench's arguments only when ``command`` is ``bench`` (the harness costs ~20 ms
    of imports that another command does not pay, issue 26)."""
    parser = argparse.ArgumentParser(prog="regrow", description="Repair failing Python functions.")
    parser.add_argument("--version", action="version", version=f"regrow {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    heal = commands.add_parser(
        "heal", help="repair a function until its pytest tests pass",
        usage="regrow heal TARGET --test NODE [--test NODE ...] [options] [-- PYTEST_OPTIONS ...]",
        epilog="Options after -- go to pytest when it collects and runs the tests, e.g. -- --import-mode=importlib.")
    heal.add_argument("target", help="path/to/module.py::function (or ::Class.method), or package.module::function")
    heal.add_argument("--test", action="append", required=True, metavar="NODE",
                      help="a pytest node id or test file the fix must pass (repeatable)")
    heal.add_argument("--rootdir", default=None, help="pytest's rootdir (default: found by pytest)")
    heal.add_argument("--max-candidates", type=count, default=None, metavar="N",
                      help="candidates to try at most (max_candidates in the configuration, or 2000)")
    heal.add_argument("--timeout", type=seconds, default=None, metavar="SECONDS",
                      help=f"seconds for the whole command, collecting the tests included (timeout in the "
                           f"configuration, or {TIMEOUT:g})")
    heal.add_argument("--candidate-timeout", type=seconds, default=None, metavar="SECONDS",
                      help="seconds per candidate's tests, and per test on the original (candidate_timeout in the "
                           f"configuration, or {CANDIDATE_TIMEOUT:g})")
    heal.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                      help="workers judging candidates at once (default: every core)")
    heal.add_argument("--environ", action="append", default=None, metavar="NAME",
                      help="an environment variable the candidates keep, besides those the code reads by name "
                           "(repeatable; its value is masked in every prompt, log and ledger)")
    heal.add_argument("--no-copy", action="store_true",
                      help="do not prove the tests that run the code in a subprocess against a scratch copy of the "
                           "tree with the fix written in")
    heal.add_argument("--model", default=None,
                      help="a model to try after the engine, e.g. openai:gpt-5 (see docs/llm.md)")
    heal.add_argument("-q", "--quiet", action="store_true",
                      help="print one line, the result (and errors): no phases, no summary")
    heal.add_argument("-v", "--verbose", action="store_true",
                      help="list every candidate judged and its verdict (and a warning's traceback)")
    heal.add_argument("--log", action="store_true",
                      help="a plain line per event, even on a terminal (the default when the output is not one)")
    add_heal_options(heal)
    heal.set_defaults(run=_heal, pytest_args=[], on_event=[], started=None)
    add_deliver_command(commands)
    add_history_commands(commands)
    commands.add_parser("run", help="run a script (or -m module) with regrow.watch on its own package: its functions "
                        "are healed when they raise (docs/production.md)", add_help=False)
    serve = commands.add_parser("mcp", help="serve regrow's tools to coding agents over MCP on stdio (docs/agents.md)")
    serve.add_argument("--root", default=".", help="the project folder targets and tests are relative to (.)")
    serve.add_argument("--store", default=None, metavar="PATH",
                       help="the SQLite ledger heals record to and history reads (ROOT/.regrow/ledger.sqlite)")
    serve.set_defaults(run=_mcp)
    worker = commands.add_parser("worker", help="heal the failures processes handed to a shared store, as jobs "
                                 "(docs/fleet.md)")
    worker.add_argument("--store", required=True, metavar="URL",
                        help="the store the jobs are in: postgresql://… (a fleet) or a SQLite file")
    worker.add_argument("--name", default=None, help="this worker's name in the ledger (host:pid)")
    worker.add_argument("--lease", type=float, default=120.0, help="seconds a taken job is this worker's (120)")
    worker.add_argument("--poll", type=float, default=1.0, help="seconds between looks for a job when idle (1)")
    worker.add_argument("--until-idle", action="store_true", help="stop once no job waits")
    worker.set_defaults(run=_worker)
    bench = commands.add_parser("bench", help="run a benchmark manifest of buggy functions")
    if command != "bench":
        return parser
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


def _worker(args: argparse.Namespace, out: TextIO) -> int:
    from .._service._worker import work

    done = work(args.store, name=args.name, lease=args.lease, poll=args.poll, until_idle=args.until_idle)
    print(f"regrow worker: {len(done)} jobs done", file=out)
    return 0


def _no_bench(args: argparse.Namespace, out: TextIO) -> int:
    raise RegrowError("regrow bench is not available in this build")


_LOG_FORMAT = "%(name)s: %(message)s"


class _OneLine(logging.Formatter):
    """A warning is its one line: the traceback of, say, a model endpoint that refused the connection is
    only for ``-v`` (the line already names the cause)."""

    def formatException(self, ei: Any) -> str:
        return ""


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``regrow`` console script; returns the exit status."""
    started = time.monotonic()  # --timeout counts from here: collecting and probing the tests come out of it
    stream = out or sys.stdout
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["run"]:  # ``regrow run script.py | -m module``: the program's own arguments follow
        from .._service._watch_run import run_main

        return run_main(words[1:])
    if words[:1] == ["heal"] and any(w == "--from" or w.startswith("--from=") for w in words):
        from ._fleet import heal_from  # one capture file, healed offline (docs/fleet.md)

        return _guard_errors(lambda: heal_from(words[1:], stream), stream)
    # ``regrow heal ... -- OPTIONS``: pytest options for collecting and running the tests.
    pytest_args = words[words.index("--") + 1:] if "--" in words else []
    args = _parser(words[0] if words else None).parse_args(words[: words.index("--")] if "--" in words else words)
    if args.command == "heal":
        args.pytest_args, args.started = pytest_args, started
    elif pytest_args:
        _parser(args.command).error("only regrow heal takes pytest options after --")
    return _guard_errors(lambda: int(args.run(args, stream)), stream, verbose=getattr(args, "verbose", False),
                         quiet=getattr(args, "quiet", False))


def _guard_errors(run: Callable[[], int], stream: TextIO, *, verbose: bool = False, quiet: bool = False) -> int:
    """Run a command: user errors are one line (exit 2), Ctrl-C and a closed output end quietly."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT) if verbose else _OneLine(_LOG_FORMAT))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if quiet:  # -q: the result line says what the session's warning would
        logging.getLogger("regrow").setLevel(logging.ERROR)
    sys.path.insert(0, os.getcwd())
    try:
        status = run()
        stream.flush()  # here, not at the interpreter's exit: a closed output is caught below
        return status
    except BrokenPipeError:  # the reader closed the output (``| head -1``): end quietly, as a shell's SIGPIPE
        silence(stream)
        return BROKEN_PIPE
    except RegrowError as exc:
        print(f"regrow: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("regrow: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())

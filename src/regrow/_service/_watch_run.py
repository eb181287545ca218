"""``regrow run script.py`` / ``regrow run -m package``: run a program with ``regrow.watch`` on its own code.

``script.py`` watches the script's folder (the script and the modules beside it and below);
``-m package.module`` watches the top-level package. The program runs as ``python`` would run it
(``__name__ == "__main__"``, ``sys.argv`` its own). At exit, repairs still running get up to
``--drain`` seconds, and a summary of what was repaired goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from .._errors import RegrowError
from ._watch import Watcher, unwatch, watch


def _seconds(floor: float, above: bool) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > floor if above else value >= floor) or value == float("inf"):
            raise argparse.ArgumentTypeError(f"a number of seconds {'above' if above else 'at least'} {floor:g}, "
                                             f"not {text!r}")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="regrow run", description="Run a Python program with regrow watching its "
                                "own code: a function of it that raises is repaired in the background.")
    p.add_argument("-m", dest="module", help="run a module as `python -m` does; its top-level package is watched")
    p.add_argument("--allow-blind", action="store_true",
                   help="install fixes proven without an oracle too (default: allow_blind in the configuration, "
                        "else off: they are logged and not installed)")
    p.add_argument("--drain", type=_seconds(0, above=False), default=30.0,
                   help="seconds to let running repairs finish when the program ends (default 30)")
    p.add_argument("--timeout", type=_seconds(0, above=True), default=None,
                   help="time budget of one repair, in seconds (timeout in the configuration, or 60)")
    p.add_argument("--model", default=None, help="a model to try after the built-in engine (see docs/llm.md)")
    p.add_argument("program", nargs=argparse.REMAINDER, help="the script and its arguments")
    return p


def run_main(argv: Sequence[str]) -> int:
    """The ``regrow run`` command; the exit status the program ended with."""
    args = parser().parse_args(list(argv))
    program = list(args.program)
    if args.module is None and not program:
        parser().print_usage(sys.stderr)
        print("regrow run: give a script or -m module", file=sys.stderr)
        return 2
    # An option not given is the configuration's ([tool.regrow], REGROW_*), as for watch() itself.
    options: dict[str, Any] = {"allow_blind": True if args.allow_blind else None, "model": args.model}
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.module is None and not os.path.isfile(program[0]):
        print(f"regrow run: error: cannot open {program[0]!r}: no such file", file=sys.stderr)
        return 2
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        # A bad setting, model or module is the user's to fix: one line and exit 2, as regrow heal says it.
        try:
            if args.module is not None:
                sys.argv = [args.module, *program]
                sys.path.insert(0, os.getcwd())
                watcher = watch(args.module.split(".")[0], **options)
            else:
                script = os.path.abspath(program[0])
                sys.argv = [script, *program[1:]]
                sys.path.insert(0, os.path.dirname(script))
                watcher = watch(folders=[os.path.dirname(script)], **options)
        except (RegrowError, ValueError) as exc:
            print(f"regrow run: error: {exc}", file=sys.stderr)
            return 2
        if args.module is not None:
            status = _run(lambda: runpy.run_module(args.module, run_name="__main__", alter_sys=True))
        else:
            status = _run(lambda: runpy.run_path(script, run_name="__main__"))
        watcher.drain(args.drain)
        _summary(watcher)
        return status
    finally:
        unwatch()
        sys.argv, sys.path[:] = saved_argv, saved_path


def _run(call: object) -> int:
    """Run the program; its exit status (1 with the traceback printed when it raised)."""
    assert callable(call)
    try:
        call()
    except SystemExit as end:
        code = end.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    return 0


def _summary(watcher: Watcher) -> None:
    for job in watcher.jobs:
        print(f"regrow: {job.name}: {job.outcome}" + (f" ({job.detail})" if job.detail else ""), file=sys.stderr)

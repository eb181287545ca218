"""``regrow bench``: run a manifest of buggy functions through the repair path and report.

Each task runs in a process of its own (see :mod:`._runner`); the results land in
``OUT/results.json`` and ``OUT/report.html``, and a summary table is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from ..._errors import RegrowError
from ..._proposers._engine._judges import cores
from ._judge import DEFAULT_MIN_CALLS
from ._manifest import load
from ._report import judgement, summarise, table, write
from ._runner import Progress, run_tasks
from ._task import llm_proposer

__all__ = ["configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the bench arguments to the ``bench`` subcommand's parser."""
    parser.add_argument("manifest", help="a manifest TOML file listing [[task]] entries")
    parser.add_argument("--proposer", choices=("engine", "llm", "chain"), default="engine",
                        help="who proposes fixes: the built-in engine, an LLM, or the engine then an LLM (engine)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="tasks run at once (CPU count)")
    parser.add_argument("--workers", type=_at_least_one, default=None, metavar="N",
                        help="warm workers judging one task's candidates at once (default: the cores left per task)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one task may take before it is killed (60)")
    parser.add_argument("--model", default=None,
                        help="model string for --proposer llm or chain, e.g. openai:gpt-5 (keys from the environment)")
    parser.add_argument("--out", default="bench-results", help="folder for results.json and report.html")
    parser.add_argument("--task", action="append", default=None, metavar="NAME", help="run only this task (repeatable)")
    parser.add_argument("--max-candidates", type=int, default=5000, help="candidates one task may try (5000)")
    parser.add_argument("--seed", type=int, default=0, help="PYTHONHASHSEED of the task processes (0)")
    parser.add_argument("--min-calls", type=_at_least_one, default=None, metavar="N",
                        help="calls a fix must be compared on against the reference to be judged correct or "
                             f"wrong; fewer leave it unjudged (the manifest's min_calls, else {DEFAULT_MIN_CALLS})")
    parser.set_defaults(run=_bench)


def _bench(args: argparse.Namespace, out: TextIO) -> int:
    suite = load(args.manifest)
    tasks = [t for t in suite.tasks if not args.task or t.name in args.task]
    if args.min_calls is not None:
        tasks = [dataclasses.replace(task, min_calls=args.min_calls) for task in tasks]
    if args.task and len(tasks) != len(set(args.task)):
        missing = sorted(set(args.task) - {t.name for t in tasks})
        raise RegrowError(f"no such task in {args.manifest}: {', '.join(missing)}")
    if args.proposer != "engine":
        _check_model(args.proposer, args.model)
    started = time.monotonic()
    print(f"regrow bench: {suite.name}, {len(tasks)} tasks, {args.jobs} at a time, proposer {args.proposer}", file=out)
    with _progress(out, len(tasks)) as on_result:
        results = run_tasks(tasks, proposer=args.proposer, model=args.model, parallel=args.jobs, timeout=args.timeout,
                            workers=args.workers or max(1, cores() // max(args.jobs, 1)),
                            max_candidates=args.max_candidates, seed=args.seed, on_result=on_result)
    summary = summarise(results)
    summary["wall_seconds"] = round(time.monotonic() - started, 3)
    options = {"proposer": args.proposer, "model": args.model, "jobs": args.jobs, "timeout": args.timeout,
               "workers": args.workers or max(1, cores() // max(args.jobs, 1)),
               "seed": args.seed, "max_candidates": args.max_candidates, "min_calls": args.min_calls}
    json_path, html_path = write(Path(args.out), suite.name, options, results, summary)
    print(table(results, summary), file=out)
    print(f"wrote {json_path} and {html_path}", file=out)
    broken = [result for result in results if result["status"] in _BROKEN]
    for result in broken:  # the task itself is wrong: say why, and the run is bad input (exit 2)
        print(f"regrow bench: {result['name']}: {result['status']}: {result.get('reason') or 'no reason given'}",
              file=sys.stderr)
    return 2 if broken else 0


_BROKEN = ("bad-target", "bad-tests", "reference-fails")  # a task the manifest got wrong, not a heal that failed


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def _check_model(proposer: str, model: str | None) -> None:
    """Refuse, before any task runs, an LLM run this build or this environment cannot do."""
    if importlib.util.find_spec("regrow._proposers._llm") is None:
        raise RegrowError(f"--proposer {proposer} needs an LLM proposer, and this build has none "
                          "(module regrow._proposers._llm is missing); use --proposer engine")
    if not model:
        raise RegrowError(f"--proposer {proposer} needs --model, e.g. --model openai:gpt-5")
    llm_proposer(model)  # a missing SDK or API key fails here, once, not in every task


@contextmanager
def _progress(out: TextIO, total: int) -> Iterator[Progress]:
    """A rich progress bar when rich is installed and ``out`` is a terminal; else a line per task."""
    lock = threading.Lock()
    done = [0]
    try:
        if not out.isatty():
            raise ImportError
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        def plain(result: dict[str, Any]) -> None:
            with lock:
                done[0] += 1
                print(f"  [{done[0]:>3}/{total}] {result['name']}: {_label(result)} ({result.get('time', 0):.1f}s)",
                      file=out, flush=True)

        yield plain
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=out)) as bar:
        job = bar.add_task("tasks", total=total)

        def fancy(result: dict[str, Any]) -> None:
            with lock:
                bar.console.print(f"  {result['name']}: {_label(result)} ({result.get('time', 0):.1f}s)")
                bar.advance(job)

        yield fancy


def _label(result: dict[str, Any]) -> str:
    status = judgement(result) or str(result["status"])
    if status == "wrong":
        return f"WRONG vs reference: {result.get('counterexample', '')}"[:160]
    if status in ("correct", "unjudged"):
        return f"{status} (on {result.get('judged_calls', 0)} calls)"
    return status

"""The end of ``regrow heal``: a summary table (target, outcome, candidates, time, what found the fix,
the tests that proved it, why the search stopped) and the diff, coloured on a terminal."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TextIO

from .._result import RepairResult
from .._target._target import Target
from ._display import label, where

_MAX_TESTS = 3  # tests named in the summary; the rest are counted


def rows(target: Target, result: RepairResult, outcome: str, judged: int,
         tests: Sequence[str]) -> list[tuple[str, str]]:
    """The summary's rows, in order."""
    screened = f", {result.screened} screened by the engine" if result.screened else ""
    ambiguity = result.ambiguous
    if ambiguity is not None:
        outcome = "ambiguous: candidates pass every test but disagree; nothing installed"
    found = [("target", f"{target.module}.{target.qualname} ({target.filename}:{target.lineno})"),
             ("outcome", outcome),
             ("candidates", f"{max(judged, result.candidates + result.screened)} judged{screened}"),
             ("time", f"{result.duration:.2f}s")]
    if result.fix is not None:
        fix = result.fix
        by = label(target, fix)
        named = ", ".join(tests[:_MAX_TESTS]) + (f" and {len(tests) - _MAX_TESTS} more" if len(tests) > _MAX_TESTS
                                                 else "")
        found += [("found by", by), ("proved by", named or "the checks")]
    if ambiguity is not None:  # each candidate and what it does on the input that separates them
        first = ambiguity.separations[0]
        found.append(("separated by", f"f({first.call[:200]})" + (f", where the original {first.original[:80]}"
                                                                   if first.original else "")))
        for number, output in enumerate(first.outputs, start=1):
            name = ambiguity.labels[number - 1] if ambiguity.labels else ""
            name = re.sub(r" at line (\d+)", lambda line: where(target, int(line[1])), name)  # the file's line
            found.append((f"candidate {number}", f"{name}: {output[:120]}" if name else output[:120]))
    found.append(("stopped", _stopped(result)))
    return found


def _stopped(result: RepairResult) -> str:
    if result.ok:
        return "a candidate passed every test" + (f" ({result.reason})" if result.reason else "")
    return result.reason or "the search ended without a fix"


def show(out: TextIO, table: list[tuple[str, str]], diff: str) -> None:
    """Print the summary and the diff: a rich table and a coloured diff on a terminal, plain text elsewhere."""
    if _colour(out):
        try:
            _show_rich(out, table, diff)
            return
        except ImportError:
            pass
    width = max(len(name) for name, _ in table)
    print("", file=out)
    for name, value in table:
        print(f"  {name:<{width}}  {value}", file=out)
    if diff:
        print("", file=out)
        print(diff, file=out, end="" if diff.endswith("\n") else "\n")
    out.flush()


def _show_rich(out: TextIO, table: list[tuple[str, str]], diff: str) -> None:
    from rich.console import Console
    from rich.syntax import Syntax
    from rich.table import Table

    console = Console(file=out, highlight=False)
    grid = Table(show_header=False, box=None, padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for name, value in table:
        grid.add_row(name, value)
    console.print()
    console.print(grid)
    if diff:
        console.print()
        console.print(Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default"))


def _colour(out: TextIO) -> bool:
    try:
        return out.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False

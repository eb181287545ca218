"""The prompt's evidence sections: what the failing checks saw, where the fault likely is, the tests,
and what the built-in engine already tried.

Each section is a list of variants, from complete to empty, so that the prompt can trim it to its
token budget (see :mod:`._prompt`). Lines are numbered from the ``def`` line (line 1), as the
model sees the function, and always shown with their text, since the function is shown without
numbers (local edits copy its lines).
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import difflib
import re
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..._target._target import Target
from ..._verdict import Attempt
from .._proposer import Request
from ._evidence import COUNT, Evidence, Seen, mask_shapes, test_source
from ._fences import block

ENGINE = "engine"
_OVERRUN = re.compile(r"\bfailed: Overrun\b")


def cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unstopped(text: str, limit: float | None = None) -> str:
    """A test stopped by the time limit reads "failed: Overrun" (pytest caught the interruption)."""
    after = f" after {limit:g}s" if limit else ""
    return _OVERRUN.sub(f"did not finish (stopped by the time limit{after})", text)


# -- lines -----------------------------------------------------------------------------------------
def relative(target: Target, file_line: int) -> int:
    return file_line - target.def_lineno + 1


def line_text(target: Target, line: int) -> str:
    """The text of line ``line`` of the definition (1 = def), stripped; ``""`` outside it."""
    lines = target.bare_source.splitlines()
    return mask_shapes(lines[line - 1].strip()) if 1 <= line <= len(lines) else ""


def shown(target: Target, line: int) -> str:
    text = line_text(target, line)
    return f"line {line}: `{text}`" if text else f"line {line}"


@dataclasses.dataclass(frozen=True)
class Loop:
    """The loop a check that did not finish was stuck in."""

    line: int  # of the definition
    kind: str
    iterations: int
    passing_most: int | None  # the most iterations in one passing check, when one ran it


def stuck_loop(target: Target, run: Seen, passing: Sequence[Seen]) -> Loop | None:
    """The innermost loop around the line that ran most often in ``run``."""
    if not run.hits:
        return None
    offset = target.lineno - 1  # target.node counts from the first decorator's line
    hot = max(run.hits, key=lambda line: (run.hits[line], line))
    loops = [n for n in ast.walk(target.node) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno + offset <= hot <= (n.end_lineno or n.lineno) + offset]
    if not loops:
        return None
    loop = max(loops, key=lambda n: n.lineno)
    body = loop.body[0].lineno + offset
    header = loop.lineno + offset
    counts = [p.hits.get(body, 0) for p in passing if header in p.hits]
    kind = {"While": "while", "For": "for", "AsyncFor": "async for"}[type(loop).__name__]
    return Loop(relative(target, loop.lineno + offset), kind, run.hits.get(body, 0), max(counts) if counts else None)


def ranked(target: Target, evidence: Evidence | None, failing_line: int | None = None) -> list[tuple[int, float]]:
    """The function's lines by suspicion (Ochiai), as ``(line of the definition, score)``; empty when
    the checks do not tell the lines apart (no passing check, or every line scored alike)."""
    if evidence is None or not evidence.failing or not evidence.passing:
        return []
    scores = evidence.spectrum().ochiai()
    last = target.def_lineno + len(target.bare_source.splitlines()) - 1
    own = {line: score for line, score in scores.items() if target.def_lineno < line <= last}
    if len(set(own.values())) < 2:
        return []
    near = failing_line if failing_line is not None else target.def_lineno
    order = sorted(own, key=lambda line: (-own[line], abs(line - near), line))
    return [(relative(target, line), own[line]) for line in order if own[line] > 0]


def focus_line(request: Request, evidence: Evidence | None) -> int | None:
    """The line of the definition nearest the fault: where it raised, the loop it hung in, or the most suspicious."""
    target, failure = request.target, request.failure
    if failure.lineno and relative(target, failure.lineno) >= 1:
        return relative(target, failure.lineno)
    if evidence is not None:
        for run in evidence.failing:
            loop = stuck_loop(target, run, evidence.passing) if run.timed_out else None
            if loop is not None:
                return loop.line
            if run.failing_line:
                return relative(target, run.failing_line)
    top = ranked(target, evidence)
    return top[0][0] if top else None


# -- sections --------------------------------------------------------------------------------------
def seen(request: Request, evidence: Evidence | None) -> list[str]:
    """What the failing checks saw on the original, most telling first."""
    if evidence is None:
        return [""]
    failure = request.failure
    runs = [run for run in evidence.failing if not (run.check == "replay" and failure.arguments)]
    if not runs:
        return [""]
    title = "## What the failing checks saw (run again on the original)"

    def block(run: Seen, full: bool) -> str:
        parts = [f"### {run.check}"]
        if run.timed_out:
            parts.append(_stopped(request.target, run, evidence))
        else:
            parts.append(cap(unstopped(run.explanation or run.reason, evidence.limit), 1200 if full else 300))
        if run.call:
            parts.append(f"The call: `{cap(run.call, 400 if full else 160)}`" + (f" {run.outcome}" if run.outcome
                                                                                   else ""))
        trace = run.traceback.rstrip()
        if run.explanation and trace.endswith(run.explanation.rstrip()):  # said just above
            trace = trace[: -len(run.explanation.rstrip())].rstrip()
            trace = trace.rsplit("\n", 1)[0] if trace.endswith(("AssertionError:", "Error:")) else trace
        if full and trace and not all(line in failure.traceback for line in trace.splitlines()):  # not all shown
            parts.append("Traceback (your code only):\n" + cap(trace, 1500))
        return "\n".join(parts)

    return [f"{title}\n" + "\n".join(block(run, True) for run in runs[:3]),
            f"{title}\n" + "\n".join(block(run, False) for run in runs[:2]),
            f"{title}\n" + block(runs[0], False), ""]


def _stopped(target: Target, run: Seen, evidence: Evidence) -> str:
    text = f"It did not finish in {evidence.limit:g}s"
    loop = stuck_loop(target, run, evidence.passing)
    if loop is not None:
        more = "at least " if loop.iterations == COUNT else ""  # 3.12+ stops counting there
        text += (f"; the `{loop.kind}` loop at {shown(target, loop.line)} ran {more}{loop.iterations:,} "
                 "iterations")
        if loop.passing_most is not None:
            text += f" (at most {loop.passing_most:,} in a passing check)"
    if run.stopped_line is not None:
        text += f". It was stopped at {shown(target, relative(target, run.stopped_line))}"
        if run.stopped:
            text += ", with " + ", ".join(f"{name} = {value}" for name, value in run.stopped.items())
    return text + "."


def suspicious(request: Request, evidence: Evidence | None) -> list[str]:
    lines = ranked(request.target, evidence, request.failure.lineno)
    if not lines or evidence is None:
        return [""]
    head = (f"## Suspicious lines (fault localization over {len(evidence.failing)} failing and "
            f"{len(evidence.passing)} passing checks; Ochiai score, 1.00 = run by failing checks only)")

    def listed(count: int) -> str:
        return head + "\n" + "\n".join(f"- {shown(request.target, line)} ({score:.2f})" for line, score in
                                       lines[:count])

    return [listed(5), listed(2), ""]


def focus(request: Request, line: int | None) -> str:
    """The few lines around ``line``, numbered, for a narrowed request."""
    if line is None:
        return ""
    lines = request.target.bare_source.rstrip("\n").split("\n")
    low, high = max(2, line - 2), min(len(lines), line + 2)
    numbered = "\n".join(f"{n:>3} | {mask_shapes(lines[n - 1])}" for n in range(low, high + 1))
    return (f"## Focus: lines {low}-{high}, where the fault most likely is (numbers are not part of the code)\n"
            f"{block(numbered, '')}")


def tests(request: Request, evidence: Evidence | None) -> list[str]:
    """The sources of the user's tests, those that failed first."""
    failing = " ".join([request.failure.reason, *(a.verdict.check + " " + a.verdict.reason
                                                  for a in request.history[-3:])])
    sources: dict[str, tuple[bool, str]] = {}
    for label, text in (evidence.sources.items() if evidence is not None else ()):
        sources[label] = (True, text)
    for check in request.checks:
        for label, text in _test_sources(check):
            sources.setdefault(label, (label in failing, text))
    if not sources:
        return [""]
    ordered = sorted(sources.items(), key=lambda item: not item[1][0])
    blocks = [f"### {label}\n{block(mask_shapes(text.rstrip()))}" for label, (_, text) in ordered[:4]]
    full = "## Tests the fix must pass\n" + "\n".join(blocks)
    first = "## A test the fix must pass\n" + blocks[0]
    return [full, first, cap(first, 1200), ""] if len(blocks) > 1 else [full, cap(full, 1200), ""]


def _test_sources(check: object) -> Iterable[tuple[str, str]]:
    text = test_source(check)  # type: ignore[arg-type]
    if text:
        yield getattr(check, "name", "test"), text
    for node_id in getattr(check, "node_ids", ()):
        path, _, name = str(node_id).partition("::")
        found = _function_in_file(Path(path), name.split("::")[-1].split("[")[0]) if name else None
        if found:
            yield str(node_id), found


def _function_in_file(path: Path, name: str) -> str | None:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(source, node)
    return None


def checks(request: Request) -> str:
    names = [getattr(check, "name", type(check).__name__) for check in request.checks]
    return "## Checks a fix must pass (cheapest first)\n" + "\n".join(f"- {name}" for name in names)


def engine(request: Request) -> list[str]:
    """What the built-in engine tried: how many candidates, of which operators, rejected by which
    checks, and the few that came closest — a few lines, whether it tried ten or ten thousand."""
    tried = {a.candidate.source.strip(): a for a in request.screened if a.candidate.origin == ENGINE}
    tried.update((a.candidate.source.strip(), a) for a in request.history if a.candidate.origin == ENGINE)
    if not tried:
        return [""]
    attempts = list(tried.values())
    screened = {a.candidate.source.strip() for a in request.screened}
    count = len(request.screened) + sum(1 for a in request.history if a.candidate.origin == ENGINE
                                        and a.candidate.source.strip() not in screened)
    # Pairs of edits ("constant+sibling") are many kinds of few each: one line says more.
    operators = collections.Counter("pairs of two edits" if "+" in (a.candidate.operator or "")
                                    else a.candidate.operator or "edit" for a in attempts)
    verdicts = collections.Counter(_check_label(a) for a in attempts)
    title = "## Already tried by the built-in engine"
    head = (f"{title}\nIt judged {count} candidates, each a small edit of the function (one or two "
            f"tokens or statements), and none passed every check. Operators: {_counts(operators)}. Failed on: "
            f"{_counts(verdicts)}. A change that small is not enough: the fix needs a real edit.")
    closest = sorted((a for a in attempts if not a.verdict.ok),
                     key=lambda a: _closeness(request, a), reverse=True)
    near = [f"- {_edit_of(request.target, a)} ({a.candidate.operator or 'edit'}): {a.verdict.check}: "
            f"{cap(unstopped(a.verdict.reason), 200)}" for a in closest[:3]]
    if not near:
        return [head, f"{title}\n{count} small edits of the function; none passed."]
    return [f"{head}\nThe ones that came closest, and why they failed:\n" + "\n".join(near),
            f"{head}\nThe closest:\n{near[0]}", head,
            f"{title}\n{count} small edits of the function; none passed."]


def _check_label(attempt: Attempt) -> str:
    check = attempt.verdict.check
    return "time limit or crash" if check == "sandbox" else check


def _counts(counter: collections.Counter[str], limit: int = 8) -> str:
    listed = ", ".join(f"{name} x{n}" for name, n in counter.most_common(limit))
    rest = sum(n for _, n in counter.most_common()[limit:])
    return listed + (f", others x{rest}" if rest else "")


def _closeness(request: Request, attempt: Attempt) -> tuple[int, ...]:
    """Higher is closer: passed in the engine's worker, passed more checks, failed a later check, failed
    another test than the original did, failed for another reason, changed less."""
    verdict, failure = attempt.verdict, request.failure
    order = {getattr(check, "name", ""): i for i, check in enumerate(request.checks)}
    test = verdict.reason.split(" failed:", 1)[0] if " failed:" in verdict.reason else ""
    original = failure.reason.split(" failed:", 1)[0] if " failed:" in failure.reason else ""
    other_test = int(bool(test and original and test != original))
    return (int(verdict.ok), len(verdict.passed), order.get(verdict.check, -1), other_test,
            int(verdict.reason != failure.reason and verdict.check != "sandbox"), -attempt.candidate.edit_size)


def _edit_of(target: Target, attempt: Attempt) -> str:
    """The first line an engine candidate changed: ``line 4: `a - b` → `a + b```."""
    before = target.bare_source.splitlines()
    after = textwrap.dedent(attempt.candidate.source).splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        old = cap(before[i1].strip(), 100) if i1 < i2 else ""
        new = cap(after[j1].strip(), 100) if j1 < j2 else "(removed)"
        if not old:
            return mask_shapes(f"line {i1 + 1}: inserted `{new}`")
        return mask_shapes(f"line {i1 + 1}: `{old}` → `{new}`")
    return attempt.candidate.describe()



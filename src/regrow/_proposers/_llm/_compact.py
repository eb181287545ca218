"""The compact prompt, for small models: the evidence that moves them, in a few hundred tokens.

A model of a few billion parameters reads a long prompt slowly on a CPU and answers it worse: it
copies the function back, or the placeholder of a format example. So the compact prompt keeps
what a fix is derived from — the failing calls with their arguments, actual against expected
values, the failing line, the top suspicious lines, the failing test's source (trimmed) — and
leaves out the traceback, the locals, the list of checks and the other tests — and the built-in
engine's summary: a greedy model answers another prompt another way, so in chain mode it gets the
prompt model-only mode sends (the same calls, not more), and a small model learns nothing it can
use from "N small edits were tried". The engine's screened candidates still count as repeats. Earlier candidates are
listed one line each, the reason they failed without their code: a greedy model shown its failed
candidate sends it again. The format example
is a concrete edit of code unrelated to the task, with nothing in it a model could copy into its
reply as it stands. Everything past the function, the failure and the request is bounded by
``evidence_budget`` tokens (see :func:`._prompt.build_prompt`).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable, Sequence

from .._proposer import Request
from . import _sections as sections
from ._evidence import Evidence, Seen, mask_shapes, without_addresses
from ._fences import block, fence
from ._sections import cap, shown, unstopped
from ._strategy import Strategy

EVIDENCE_BUDGET = 350  # tokens for everything but the system prompt, the function, the failure and the request
REPLY_FLOOR = 256  # the fewest reply tokens a small model is allowed


def reply_cap(source_tokens: int, given: object = None) -> int:
    """The reply tokens asked of a small model: twice the function's (a rewrite may be longer) and some,
    at least :data:`REPLY_FLOOR`, at most ``given``. In bench-llm every reply that ended by itself took at most
    1.5 times the function's estimated tokens (146 at most); one that ran on past its function (the test's
    code, continued) took the server's whole cap of 768, 189 s on a CPU."""
    wanted = max(REPLY_FLOOR, 2 * source_tokens + 128)
    return min(wanted, given) if isinstance(given, int) and given > 0 else wanted


# Each name advances that section to its next shorter variant; earlier entries are cheaper to lose.
TRIM_ORDER = ("tests", "suspicious", "seen", "tests", "seen", "arguments", "suspicious", "tests")

EXAMPLE = textwrap.dedent("""\
    For example, to make `total -= price` add instead, in some other function:
    <<<<<<< SEARCH
            total -= price
    =======
            total += price
    >>>>>>> REPLACE""")


def system(request: Request, strategy: Strategy) -> str:
    name, mark = request.target.name, fence(request.target.bare_source)
    if strategy.format == "edit":
        reply = (f"Reply with SEARCH/REPLACE blocks that change the wrong lines of `{name}`: the lines as they are "
                 f"in the function, then `=======`, then the corrected lines.\n{EXAMPLE}\nFor a larger change, "
                 f"reply with the whole corrected function in one {mark}python block instead.")
    else:
        reply = f"Reply with the whole corrected function `{name}` in one {mark}python block."
    return (f"You fix a bug in one Python function so that its tests pass.\n{reply}\n"
            "Keep its name and parameters; no decorators. Fix the cause: do not catch every exception or return "
            "a placeholder. Never send back the function unchanged or a candidate that already failed.")


def function(request: Request, strategy: Strategy) -> str:
    target = request.target
    where = f"method of class `{target.qualname.rsplit('.', 1)[0]}`" if "." in target.qualname else "function"
    if strategy.rewrite:
        return f"## The {where} `{target.name}` (its old body is wrong and left out)\n{block(_head(request))}"
    source = mask_shapes(target.bare_source.rstrip())
    return f"## The {where} `{target.name}`\n{block(source)}"


def _head(request: Request) -> str:
    """The definition without its body: the ``def`` line(s) and the docstring, then ``...``."""
    source = request.target.bare_source.rstrip()
    lines = source.splitlines()
    try:
        node = ast.parse(textwrap.dedent(source)).body[0]
    except (SyntaxError, ValueError, IndexError):
        return mask_shapes(lines[0] if lines else "")
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
        return mask_shapes(lines[0])
    first = node.body[0]
    docstring = ast.get_docstring(node, clean=False) is not None
    end = (first.end_lineno or first.lineno) if docstring else first.lineno - 1
    start = node.lineno - 1
    indent = " " * (len(lines[start]) - len(lines[start].lstrip()) + 4)
    return mask_shapes("\n".join([*lines[start:max(end, start + 1)], f"{indent}..."]))


def failure(request: Request, evidence: Evidence | None = None) -> str:
    """The error and where it happened; the error is left out when the first failing check's line below
    says it already (in bench-llm it repeated that line in every prompt: some 20 tokens a call)."""
    target, failed = request.target, request.failure
    message = without_addresses(failed.message)
    what = [] if _told_below(message, evidence) else [
        f"## The failure\n{unstopped(cap(f'{failed.exc_type}: {message}'.rstrip(': '), 300))}"]
    if failed.lineno and failed.lineno >= target.def_lineno:
        what.append(f"It failed at {shown(target, failed.lineno - target.def_lineno + 1)}")
    return "\n".join(what)


def _told_below(message: str, evidence: Evidence | None) -> bool:
    if evidence is None or not evidence.failing or not message.strip():
        return False
    first = evidence.failing[0]
    core = _NODE_FAILED.sub("", message.strip(), count=1)
    return core in gist(first.explanation or first.reason) or core in first.reason


_NODE_FAILED = re.compile(r"^\S+ failed: ")
_WHERE = re.compile(r"^\+\s+where (.+)$")
_EXPECTS = {"==": "expected {}", "is": "expected {}", "!=": "expected anything but {}"}


def plain(told: str) -> str:
    """pytest's ``assert A == B / +  where A = f(x)`` said plainly: ``f(x) returned A; expected B``.

    A small model read ``assert 3600 == 5400 / +  where 3600 = parse_duration('1h30m')`` as the rule
    ``parse_duration('1h30m') == 3600`` (bench-llm: it wrote that assert below its rewrite). Only an
    assertion whose ``where`` names one side of a comparison is rewritten; anything else is kept."""
    parts = told.split(" / ")
    for index, part in enumerate(parts[:-1]):
        where = _WHERE.match(parts[index + 1].strip())
        start = 0 if part.startswith("assert ") else part.rfind(" assert ") + 1
        if where is None or not part.startswith("assert ", start):
            continue
        said = _said(part[start + len("assert "):], where.group(1))
        if said:
            return " / ".join([*parts[:index], part[:start] + said, *parts[index + 2:]])
    return told


def _said(comparison: str, where: str) -> str:
    for split in (i for i in range(len(where)) if where.startswith(" = ", i)):
        value, call = where[:split], where[split + 3:]
        for op, expects in _EXPECTS.items():
            if comparison.startswith(f"{value} {op} "):
                other = comparison[len(f"{value} {op} "):]
            elif comparison.endswith(f" {op} {value}"):
                other = comparison[:-len(f" {op} {value}")]
            else:
                continue
            return f"{call} returned {value}; " + expects.format(other)
    return ""


def proposer_names(labels: Iterable[str]) -> tuple[str, ...]:
    """The proposers named in earlier candidates' labels (``"openai:model call 2"`` names ``openai:model``)."""
    return tuple(sorted({label.rsplit(" call ", 1)[0] for label in labels if " call " in label}, key=len,
                        reverse=True))


def unnamed(text: str, names: Sequence[str]) -> str:
    """``call 2`` rather than ``openai:qwen… call 2``: which proposer made a candidate tells a model nothing."""
    for name in names:
        text = text.replace(f"{name} call ", "call ")
    return text


def briefly(text: str, names: Sequence[str] = ()) -> str:
    """A reason or a label in the words a model needs: :func:`unnamed`, and the failing test by its name
    rather than ``pytest:tests/test_x.py: tests/test_x.py::test_y`` (some 30 tokens an earlier candidate
    in bench-llm, none of them evidence), its assertion said :func:`plain`ly."""
    text = _CHECK_PREFIX.sub("", unnamed(text, names), count=1)
    return plain(_NODE_PATH.sub("", text).replace(" + where ", " / +  where "))


_CHECK_PREFIX = re.compile(r"^pytest:[^\s:]+: |^test:(?=\S)")
_NODE_PATH = re.compile(r"(?<![\w./-])[\w./-]+\.py::")


def seen(request: Request, evidence: Evidence | None) -> list[str]:
    """The failing checks' calls, actual against expected, one or two lines each."""
    if evidence is None or not evidence.failing:
        return [""]
    runs = evidence.failing

    def one(run: Seen, limit: int) -> str:
        name = briefly(run.check.rsplit("::", 1)[-1])
        if run.timed_out:
            told = sections._stopped(request.target, run, evidence)
        else:
            told = unstopped(plain(gist(run.explanation or run.reason)), evidence.limit)
        call = ""
        if run.call and len(run.call) <= limit and (run.outcome or f"{request.target.name}(" not in told):
            call = f"; the call `{run.call}` {run.outcome}".rstrip()
        return f"- {name}: {cap(mask_shapes(told), limit)}{call}"

    title = "## What the failing tests saw"
    return [f"{title}\n" + "\n".join(one(run, 240) for run in runs[:3]),
            f"{title}\n" + "\n".join(one(run, 120) for run in runs[:2]), f"{title}\n" + one(runs[0], 120), ""]


def gist(text: str) -> str:
    """A failure's explanation in one line: pytest's failing line and its ``E`` lines when it has them
    (a unittest-style report starts with ``self = <…>`` and the test's source), else its first lines."""
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    if errors:
        failing = [line[1:].strip() for line in lines if line.startswith("> ")]
        return " / ".join([*failing[-1:], *errors[:3]])
    return " / ".join(line.strip() for line in lines[:3])


def suspicious(request: Request, evidence: Evidence | None) -> list[str]:
    lines = sections.ranked(request.target, evidence, request.failure.lineno)
    if not lines:
        return [""]

    def listed(count: int) -> str:
        return "## Most suspicious lines\n" + "\n".join(f"- {shown(request.target, line)}" for line, _ in
                                                       lines[:count])

    return [listed(3), listed(1), ""]


def tests(request: Request, evidence: Evidence | None) -> list[str]:
    """The failing test's source, trimmed; the others are left out."""
    full = sections.tests(request, evidence)[0]
    if not full:
        return [""]
    first = full.split("\n### ", 2)
    test = "### " + first[1] if len(first) > 1 else full
    test = test.split("\n", 1)[1] if test.startswith("### ") else test
    mark = "\n" + test[:len(test) - len(test.lstrip("`"))]  # the fence it opened with closes it when cut
    return [f"## The failing test\n{cap(test.rstrip(), 700)}" + (mark if len(test) > 700 else ""),
            f"## The failing test\n{cap(test.rstrip(), 350)}" + (mark if len(test) > 350 else ""), ""]


def ask(request: Request, strategy: Strategy, line: int | None) -> str:
    name, mark = request.target.name, fence(request.target.bare_source)
    if strategy.rewrite and strategy.variant:
        asked = step_by_step(request, line)
    elif strategy.rewrite:
        asked = (f"Write `{name}` again, a new body from its signature, docstring and the test, not the old one. "
                 f"Reply with the whole function in one {mark}python block.")
    elif strategy.format == "edit":
        asked = f"Reply with SEARCH/REPLACE blocks that fix `{name}`."
    else:
        asked = f"Reply with the whole fixed `{name}` in one {mark}python block."
    if strategy.narrow and line is not None:
        asked = f"Change the code around {shown(request.target, line)}. {asked}"
    if strategy.problem:
        asked = f"Your previous reply {strategy.problem}: it cannot pass.\n{asked}"
    return asked


def step_by_step(request: Request, line: int | None) -> str:
    """The second rewrite: another instruction, the old body still left out. It names the line the old body
    went wrong at, and asks for the function alone: in bench-llm 5 of 10 first rewrites came back with the
    test's code, a top-level assert, a helper function or an import of a package next to the function."""
    name = request.target.name
    text = sections.line_text(request.target, line) if line is not None else ""
    wrong = f"The old body went wrong at the line `{text}`.\n" if text else ""  # its numbers are not shown
    return (f"{wrong}Write `{name}` step by step from its docstring and the tests' examples: for each rule they "
            f"show, a comment, then the code for it. Reply with only `{name}` in one "
            f"{fence(request.target.bare_source)}python block: no tests, "
            f"no other functions, no imports of other packages.")

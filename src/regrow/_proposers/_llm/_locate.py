"""The "locate" request: the model as the engine's eyes.

The model is shown the failure's evidence and the function with numbered lines, and answers in a
small JSON format — the defective line, the kind of edit, the code the fixed line would use —
instead of writing the function. The engine
(:class:`regrow._proposers._engine._focus.FocusedEngine`) then makes and judges the edits at those
lines first, with the model's code and its parts as vocabulary. Models answer with an expression or
with the whole fixed line (``if x == y:``, ``total += 0``, ``return self``): a compound statement's
header gives its test (or a ``for``'s iterable), and one simple statement is kept whole, for the
engine to put in place of the statement on that line besides its expressions in place of the line's.
Whatever the model answered, no text of it runs as it was sent: code is only parsed, and a candidate
built from it is proven like any other. A reply that is not the format, names a line the function
does not have, or code that reaches for ``eval``, ``open``, ``__import__`` or a dunder is refused
with that reason, as a rewrite's refusals are; code that is neither an expression nor one simple
statement is left out and its line searched without it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from typing import Any

from ..._candidate import Candidate
from .._proposer import Request
from . import _compact as compact
from ._disclosed import disclosed
from ._evidence import Evidence, mask_shapes
from ._fences import block
from ._prompt import Prompt, estimate_tokens

KINDS = ("operator", "constant", "name", "condition", "call", "index", "return", "insert", "delete", "other")
MAX_SPOTS = 3  # places a reply may name
MAX_REPLY = 4000  # characters: a locate answer is a few dozen
MAX_USE = 200  # characters of one expression or statement
LOCATE_TOKENS = 300  # the reply's token cap
FORBIDDEN = frozenset({"eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr",
                       "setattr", "delattr", "input", "breakpoint", "exit", "quit", "memoryview", "help"})
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
# the statements a "use" may be, kept whole (a compound statement gives its header's expression instead)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert, ast.Expr, ast.Pass,
           ast.Break, ast.Continue)


@dataclasses.dataclass(frozen=True)
class Spot:
    """One place the model named: a line of the definition (1 = the ``def`` line), the kind of edit,
    and the code the fixed line would use (``""`` when it named none): an expression or one simple
    statement, as :func:`usable` made it."""

    line: int
    kind: str
    use: str = ""


@dataclasses.dataclass(frozen=True)
class Located:
    """A parsed locate reply: the places, or (none) the reason it was refused."""

    spots: tuple[Spot, ...]
    reason: str = ""
    notes: tuple[str, ...] = ()  # places dropped from a reply that had usable ones too


SYSTEM = ("Find the defective line of a Python function whose tests fail. Do not rewrite the function: name "
          "the line, the kind of change and the code of the fixed line. Answer with JSON only.")


def ask(request: Request) -> str:
    # placeholders in angle brackets: a small model given `"edit": "operator|constant|..."` copies it whole
    return (f'## Your answer\n{{"line": <its number>, "edit": "<one of: {", ".join(KINDS)}>", "use": "<the fixed '
            f'line\'s code>"}}\nor a list of up to {MAX_SPOTS} of them, most likely first.')


def numbered(request: Request) -> str:
    lines = mask_shapes(request.target.bare_source.rstrip()).splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{number:>{width}} | {text}" for number, text in enumerate(lines, start=1))


def locate_prompt(request: Request, evidence: Evidence | None) -> Prompt:
    """The locate request: the numbered function, the failure, what the failing tests saw, the
    suspicious lines and the failing test, each as short as the compact prompt has them."""
    request = disclosed(request)
    test = compact.tests(request, evidence)
    parts = [f"## The function `{request.target.name}`, its lines numbered\n{block(numbered(request), '')}",
             compact.failure(request, evidence), compact.seen(request, evidence)[0],
             compact.suspicious(request, evidence)[0], test[1] if len(test) > 1 else test[0], ask(request)]
    user = "\n\n".join(part for part in parts if part)
    return Prompt(SYSTEM, user, estimate_tokens(SYSTEM) + estimate_tokens(user))


def parse_locate(text: str, lines: int) -> Located:
    """The places a reply names, checked against a function of ``lines`` lines."""
    if len(text) > MAX_REPLY:
        return Located((), f"the reply is {len(text)} characters, not the short JSON asked for")
    try:
        data = json_in(text)
    except ValueError as exc:
        return Located((), f"the reply is not the JSON asked for ({exc})")
    items = data if isinstance(data, list) else [data]
    spots: list[Spot] = []
    problems: list[str] = []
    for item in items[:MAX_SPOTS]:
        spot, problem = _spot(item, lines)
        if spot is not None and spot not in spots:
            spots.append(spot)
        if problem:
            problems.append(problem)
    if not spots:
        return Located((), "; ".join(problems) or "the reply names no line")
    return Located(tuple(spots), notes=tuple(problems))


def json_in(text: str) -> Any:
    fenced = _FENCE.search(text)
    body = (fenced.group(1) if fenced else text).strip()
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object in it")
    try:
        value, _ = json.JSONDecoder().raw_decode(body, min(starts))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"invalid JSON: {str(exc)[:80]}") from None
    return value


def _spot(item: Any, lines: int) -> tuple[Spot | None, str]:
    if not isinstance(item, dict):
        return None, f"{_short(item)} is not an object with line, edit and use"
    line = item.get("line")
    if isinstance(line, str) and line.strip().isdigit():
        line = int(line.strip())
    if type(line) is not int:
        return None, f"line {_short(line)} is not a line number"
    if not 1 <= line <= lines:
        return None, f"line {line} is not a line of the function (1-{lines})"
    kind = str(item.get("edit") or item.get("kind") or "other").strip().lower()
    kind = kind if kind in KINDS else "other"
    use = item.get("use", "")
    if use is None:
        use = ""
    if not isinstance(use, str):
        return None, f"the expression {_short(use)} is not text"
    use, problem = usable(use.strip().strip("`").strip())
    if problem and use is None:  # code that is not what the engine can use: the line is still a place
        return Spot(line, kind), f"line {line}: {problem}; the line is searched without it"
    if problem:
        return None, f"line {line}: {problem}"
    return Spot(line, kind, use or ""), ""


def usable(use: str) -> tuple[str | None, str]:
    """The code a model named, as the engine takes it — an expression, or one simple statement (a
    compound statement's header, ``if x:`` or ``elif x:``, ``while x:``, ``for y in x:``, gives ``x``)
    in ``ast.unparse``'s spelling — and ``""``; or ``""`` and why it is refused (too long, or reaching
    for what a fix is not built from); or ``None`` and why it is not code the engine can use."""
    if not use:
        return "", ""
    if len(use) > MAX_USE:
        return "", f"the expression is {len(use)} characters (at most {MAX_USE})"
    tree = _parsed(use)
    if tree is None:
        return None, f"`{_short(use)}` is not a Python expression or one simple statement"
    problem = unusable(tree)
    return ("", problem) if problem else (ast.unparse(tree), "")


def _parsed(use: str) -> ast.expr | ast.stmt | None:
    text = use.rstrip(";").strip()
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    if text.startswith("elif "):
        text = text[2:]
    if text.endswith(":"):  # a header, or an expression the model ended with its line's colon
        try:
            return ast.parse(text[:-1], mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            text += "\n    pass"
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(body) != 1:
        return None
    (stmt,) = body
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return None
    return stmt if isinstance(stmt, _SIMPLE) else None


def unusable(tree: ast.AST) -> str:
    """Why code from a model cannot be vocabulary (``""`` when it can)."""
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name in FORBIDDEN or (name.startswith("__") and name.endswith("__")):
            return f"the expression reaches for `{name}`, which a fix is not built from"
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return f"the expression holds a {type(node).__name__.lower()}, which a fix is not built from"
    return ""


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def searched(request: Request, located: Located, origin: str, call: int) -> list[Candidate]:
    """The engine's candidates at the located places that pass its own judging, best first, each
    labelled as this call's (the session proves and rails them as a model's)."""
    from .._engine._focus import Focus, FocusedEngine  # the engine loads only when a locate reply is used

    focus = Focus(tuple(dict.fromkeys(spot.line for spot in located.spots)),
                  tuple(dict.fromkeys(spot.use for spot in located.spots if spot.use)))
    engine = FocusedEngine(focus, jobs=request.jobs)
    found = []
    for candidate in engine.propose(request):
        label = f"call {call} locate: {candidate.operator}"
        found.append(dataclasses.replace(candidate, origin=origin, operator=label))
    return found

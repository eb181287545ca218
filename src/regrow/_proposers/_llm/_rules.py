"""What a candidate for one target must look like, and the checks a parsed reply goes through.

The same normal form (the AST, docstrings and decorators left out) tells an echo of the original
and a repeat of an earlier candidate, however the reply formatted or commented it.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap

from ..._target._target import FunctionNode

MAX_REPLY_CHARS = 200_000
# What parsing or compiling a reply's code raises when it is not code: the last two when it is nested too
# deeply for the parser (a 160,000-character `x + 0 + 0 ...` is under MAX_REPLY_CHARS).
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclasses.dataclass(frozen=True)
class Rules:
    """What a candidate for one target must look like."""

    name: str
    original: FunctionNode | None = None  # the target's own definition, for the signature check
    owner: str | None = None  # the class the target is a method of (a reply may echo the whole class)
    allow_signature_change: bool = False
    allow_helpers: bool = False
    max_chars: int = MAX_REPLY_CHARS
    source: str = ""  # the definition as the prompt showed it, which local edits apply to
    hint: int | None = None  # the line (1 = def) nearest the fault: picks between equal matches of an edit

    @property
    def is_async(self) -> bool:
        return isinstance(self.original, ast.AsyncFunctionDef)


class Refused(Exception):
    """A reply refused, with the reason (worded for the model) and the code it held."""

    def __init__(self, reason: str, code: str = "", echo: bool = False) -> None:
        super().__init__(reason)
        self.code = code
        self.echo = echo


def normal_form(source: str) -> str | None:
    """The AST of a definition without decorators and docstrings, as text; ``None`` if it does not parse
    (or is nested too deeply to)."""
    try:
        return _normal_form(source)
    except UNPARSABLE:
        return None


def _normal_form(source: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is (tree.body[0] if tree.body else None):
                node.decorator_list = []
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def check_signature(node: FunctionNode, rules: Rules) -> None:
    original = rules.original
    if original is None:
        return
    if isinstance(node, ast.AsyncFunctionDef) != rules.is_async:
        want = "async def" if rules.is_async else "def (not async def)"
        raise Refused(f"`{rules.name}` must stay {want}", ast.unparse(node))
    if rules.allow_signature_change:
        return
    before, after = parameters(original), parameters(node)
    if before != after:
        raise Refused(f"the signature changed from ({before}) to ({after}); keep the parameters, their order, "
                      "kinds and defaults exactly as they are", ast.unparse(node))


def parameters(node: FunctionNode) -> str:
    """The parameter list without annotations: names, kinds and defaults."""
    args = node.args

    def bare(arg: ast.arg) -> ast.arg:
        return ast.arg(arg=arg.arg)

    return ast.unparse(ast.arguments(
        posonlyargs=[bare(a) for a in args.posonlyargs],
        args=[bare(a) for a in args.args],
        vararg=bare(args.vararg) if args.vararg else None,
        kwonlyargs=[bare(a) for a in args.kwonlyargs],
        kw_defaults=list(args.kw_defaults),
        kwarg=bare(args.kwarg) if args.kwarg else None,
        defaults=list(args.defaults),
    ))


def check_compiles(source: str, rules: Rules) -> None:
    try:
        compile(source, f"<candidate {rules.name}>", "exec", dont_inherit=True)
    except UNPARSABLE as exc:
        raise Refused(f"the code does not compile: {syntax_where(exc)}", source) from exc


def check_changed(source: str, rules: Rules) -> None:
    """Refuse an echo: the candidate is the original, reformatted or recommented at most."""
    if rules.original is None:
        return
    # Not normal_form: code too deep for ast.dump raises here, and the reply is refused as too deep.
    if _normal_form(source) == normal_form(ast.unparse(rules.original)):
        raise Refused("the function is unchanged from the original, which fails; change the code to fix the "
                      "failure", source, echo=True)


def syntax_where(exc: Exception) -> str:
    if isinstance(exc, SyntaxError):
        text = (exc.text or "").strip()
        shown = f": `{text}`" if text else ""
        return f"{type(exc).__name__}: {exc.msg} at line {exc.lineno}{shown}"
    if isinstance(exc, (RecursionError, MemoryError)):
        return f"{_named(exc)}: it is nested too deeply for Python's parser; write it with less nesting"
    return f"{type(exc).__name__}: {exc}"


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__

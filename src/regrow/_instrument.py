"""How ``@heal`` hooks a function without wrapping it: the function's own code, its body in a ``try``.

The definition is read from its file (the lines the running code was compiled from), its body put
inside ``try``/``except Exception`` whose handler hands the failure to a :class:`Hook`, compiled with
the real file name and line numbers, and installed into the same function object
(``func.__code__ = ...``). A healthy call costs the function's own frame and nothing else (the
``try`` is free on 3.11+); every reference taken before decoration is hooked too.

The handler's instructions have no line number, so tracers, debuggers and coverage see only the
user's lines; it re-raises with a bare ``raise``, so the traceback is the one the body made. The
arguments handed over are the parameters as they entered: read again in the handler, or — for a
parameter the body rebinds (or a ``**kwargs`` dict it uses) — kept in a local at entry.

Where this cannot apply (no source, a source that does not compile to the running code, a
generator), :func:`instrument` says why and ``@heal`` wraps the function instead.
"""

from __future__ import annotations

import ast
import contextvars
import inspect
import linecache
import logging
import sys
import threading
import types
from tokenize import TokenError
from typing import TYPE_CHECKING, Any

from ._source import FUTURE_FLAGS, _compare
from ._target import Target
from ._wrapper import RAISE, RETRY

if TYPE_CHECKING:
    from ._heal import Healing

# Placeholders compiled as string constants, then replaced in the code's constants by the hook and by
# ``Exception``: the handler reaches them with no name lookup (a module may shadow any name).
log = logging.getLogger("regrow")

_HOOK = "__regrow_hook_placeholder_7f3a9c__"
_CAUGHT = "__regrow_caught_placeholder_7f3a9c__"
_PREFIX = "_regrow_p"  # the locals that keep rebound parameters as they entered
_NOT_HOOKABLE = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR
_retrying: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("regrow_retrying", default=frozenset())


class Hook:
    """What an instrumented function's handler calls: the failure is handed to its :class:`Healing` state.

    ``caught`` says whether the handler re-raises; when it does not, ``result`` is what the call returns
    (the fixed function called again with the same arguments, or ``None`` for ``on_failure="return_none"``).
    A failure of that second call propagates as it is, as it did through the wrapper.
    """

    __slots__ = ("_local", "code", "plain", "state")

    def __init__(self, state: Healing) -> None:
        self.state = state
        self._local = threading.local()
        self.plain: types.CodeType | None = None  # the code the body is instrumented from (the user's)
        self.code: types.CodeType | None = None  # the instrumented code installed

    def caught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or id(self) in _retrying.get():
            return True
        decision = self.state.on_error(exc, args, kwargs)
        if decision is RAISE:
            return True
        value = None
        if decision is RETRY:
            token = _retrying.set(_retrying.get() | {id(self)})
            try:
                value = self.state.func(*args, **kwargs)
            finally:
                _retrying.reset(token)
        self._local.value = value
        return False

    async def acaught(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        exc = sys.exc_info()[1]
        if not isinstance(exc, Exception) or id(self) in _retrying.get():
            return True
        decision = await self.state.aon_error(exc, args, kwargs)
        if decision is RAISE:
            return True
        value = None
        if decision is RETRY:
            token = _retrying.set(_retrying.get() | {id(self)})
            try:
                value = await self.state.func(*args, **kwargs)
            finally:
                _retrying.reset(token)
        self._local.value = value
        return False

    def result(self) -> Any:
        value, self._local.value = self._local.value, None
        return value


def hook(func: types.FunctionType, state: Healing) -> str:
    """Instrument ``func`` for ``state`` in place (``state.hook`` is set); ``""``, or why it could not be."""
    made = Hook(state)
    code = instrument(func, made)
    if isinstance(code, str):
        return code
    made.plain, made.code = func.__code__, code
    func.__code__ = code
    state.hook = made
    return ""


def rehook(func: types.FunctionType, made: Hook) -> None:
    """After a repair session: the code ``func`` runs now (a fix, or the original put back) hooked again."""
    current = func.__code__
    if current is made.code:
        return
    code = made.code if current is made.plain else instrument(func, made, current)
    if isinstance(code, str) or code is None:
        log.warning("%s: the fix installed could not be instrumented (%s): its failures are not healed",
                    func.__qualname__, code)
        return
    made.plain, made.code = current, code
    func.__code__ = code


def rebound(fn: types.FunctionType, made: Hook, target: Target) -> None:
    """``fn`` (a fix whose free variables differ from the original's) hooked, and put where the name is found."""
    fn.__regrow__ = made.state  # type: ignore[attr-defined]
    rehook(fn, made)
    target.rebind(fn)


def plain_target(func: types.FunctionType, made: Hook) -> Target:
    """The :class:`Target` of an instrumented ``func``: its source is checked against the user's code, while
    the code it puts back after judging a candidate (``original_code``) is the instrumented one that runs."""
    assert made.plain is not None
    plain = types.FunctionType(made.plain, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    plain.__kwdefaults__, plain.__qualname__, plain.__module__ = func.__kwdefaults__, func.__qualname__, \
        func.__module__
    target = Target.of(plain)
    target.func, target.original_code = func, func.__code__
    return target


def instrument(func: types.FunctionType, hook: Hook, code: types.CodeType | None = None) -> types.CodeType | str:
    """``code`` (default: ``func``'s) with its body inside a ``try`` whose handler calls ``hook``; or why it
    cannot be (a string), in which case nothing changed."""
    code = code or func.__code__
    if code.co_flags & _NOT_HOOKABLE:
        return "a generator is caught while its caller iterates: it is wrapped"
    block = _block(func, code)
    if isinstance(block, str):
        return block
    lines, first = block
    indented = lines[0][:1] in (" ", "\t")
    try:  # `if 1:` keeps an indented definition's columns: the carets of a traceback stay on the user's text
        tree = ast.parse(("if 1:\n" if indented else "") + "".join(lines))
    except SyntaxError as exc:
        return f"its source does not parse: {exc.msg}"
    node = tree.body[0].body[0] if indented else tree.body[0]  # type: ignore[attr-defined]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name:
        return f"no definition of {code.co_name} at line {code.co_firstlineno} of {code.co_filename}"
    ast.increment_lineno(tree, first - (2 if indented else 1))
    module = _scaffold(node, func.__qualname__)
    flags = code.co_flags & FUTURE_FLAGS
    try:
        plain = _compiled(module, code, flags)
    except SyntaxError as exc:
        return f"its source does not compile alone: {exc.msg}"
    if plain is None or plain.co_code != code.co_code or _compare(code, plain) or plain.co_freevars != code.co_freevars:
        return "its source does not compile to the code that is running (the file changed since import?)"
    taken = set(code.co_varnames) | set(code.co_names) | set(code.co_cellvars) | set(code.co_freevars)
    if any(name.startswith(_PREFIX) for name in taken):
        return f"it already uses names starting with {_PREFIX}"
    node.body = _hooked_body(node)
    made = _compiled(module, code, flags)
    if made is None or made.co_freevars != code.co_freevars:
        return "the instrumented code needs other closure cells"
    consts = tuple(hook if c == _HOOK else Exception if c == _CAUGHT else c for c in made.co_consts)
    replaced = made.replace(co_consts=consts)
    if sys.version_info >= (3, 11):
        replaced = replaced.replace(co_qualname=code.co_qualname)
    return replaced


def _block(func: types.FunctionType, code: types.CodeType) -> tuple[list[str], int] | str:
    """The lines of the definition (decorators included) and its first line's number."""
    lines = linecache.getlines(code.co_filename, func.__globals__)
    start = code.co_firstlineno - 1
    if not lines or not 0 <= start < len(lines):
        return f"no source for {code.co_filename}:{code.co_firstlineno}"
    try:
        block = inspect.getblock(lines[start:])
    except (SyntaxError, TokenError) as exc:
        return f"its source cannot be read: {exc}"
    return (list(block), start + 1) if block else "its source is empty"


def _scaffold(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> ast.Module:
    """A module holding ``node`` as it is held: a method inside a class of its owner's name (private names
    are mangled as there, and ``super()`` gets its ``__class__`` cell)."""
    parts = qualname.split(".")
    body: list[ast.stmt] = [node]
    if len(parts) >= 2 and parts[-2].isidentifier():
        owner = ast.ClassDef(name=parts[-2], bases=[], keywords=[], body=body, decorator_list=[])
        if sys.version_info >= (3, 12):
            owner.type_params = []
        body = [owner]
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    return module


def _compiled(module: ast.Module, code: types.CodeType, flags: int) -> types.CodeType | None:
    """The code of the function in ``module`` that stands where ``code`` does (decorators are compiled, never run)."""
    top = compile(module, code.co_filename, "exec", flags=flags, dont_inherit=True)
    found = [top]
    while found:
        each = found.pop()
        for const in each.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name == code.co_name and const.co_firstlineno == code.co_firstlineno:
                    return const
                found.append(const)
    return None


def _hooked_body(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """``node``'s body inside the ``try`` whose handler calls the hook; its docstring stays first."""
    body = list(node.body)
    doc = body[:1] if _is_docstring(body[0]) else []
    rest = body[len(doc):] or [ast.copy_location(ast.Pass(), body[0])]
    params, kept = _arguments(node)
    entry: list[ast.stmt] = []
    for name, copy in kept.items():  # the parameters the body rebinds, as they entered
        value: ast.expr = ast.Dict(keys=[None], values=[ast.Name(name, ast.Load())]) if copy else \
            ast.Name(name, ast.Load())
        entry.append(ast.Assign(targets=[ast.Name(f"{_PREFIX}{len(entry)}", ast.Store())], value=value))
    renamed = {name: f"{_PREFIX}{index}" for index, name in enumerate(kept)}
    positional, keywords = params
    args = ", ".join(("*" if star else "") + renamed.get(name, name) for name, star in positional)
    kwargs = ", ".join(f"**{renamed.get(name, name)}" if star else f"{name!r}: {renamed.get(name, name)}"
                       for name, star in keywords)
    wait, caught = ("await ", "acaught") if isinstance(node, ast.AsyncFunctionDef) else ("", "caught")
    text = (f"try:\n    pass\nexcept {_CAUGHT!r}:\n    if {wait}{_HOOK!r}.{caught}(({args}{',' if args else ''}), "
            f"{{{kwargs}}}):\n        raise\n    return {_HOOK!r}.result()\n")
    handler = ast.parse(text).body[0]
    for each in (*entry, handler):
        for part in ast.walk(each):
            if isinstance(part, (ast.stmt, ast.expr, ast.excepthandler)):
                # No line: tracers, debuggers and coverage see only the user's lines (the entry copies are
                # put on the first statement's line, which runs next anyway).
                part.lineno = part.end_lineno = -1
                part.col_offset = part.end_col_offset = -1
    assert isinstance(handler, ast.Try)
    handler.body = rest
    for each in (*entry, handler):
        ast.copy_location(each, rest[0])
        each.end_lineno, each.end_col_offset = rest[-1].end_lineno, rest[-1].end_col_offset
    return [*doc, *entry, handler]


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[list[tuple[str, bool]],
                                                                              list[tuple[str, bool]]], dict[str, bool]]:
    """The parameters handed over (positional, then keyword; ``True``: starred) and those to keep at entry
    (``True``: a ``**kwargs`` dict to copy, which the body may change in place)."""
    a = node.args
    positional = [(p.arg, False) for p in (*a.posonlyargs, *a.args)] + ([(a.vararg.arg, True)] if a.vararg else [])
    keywords = [(p.arg, False) for p in a.kwonlyargs] + ([(a.kwarg.arg, True)] if a.kwarg else [])
    names = {name for name, _ in (*positional, *keywords)}
    rebound, used = _bindings(node.body)
    kept = {name: False for name, _ in (*positional, *keywords) if name in rebound}
    if a.kwarg and a.kwarg.arg in used:
        kept[a.kwarg.arg] = True
    return (positional, keywords), {name: copy for name, copy in kept.items() if name in names}


def _bindings(body: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """Names the body binds anywhere (nested scopes included: a ``nonlocal`` may rebind), and names it loads
    other than as ``**name`` in a call."""
    bound: set[str] = set()
    loaded: set[str] = set()
    spread: set[int] = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.keyword) and n.arg is None and isinstance(n.value, ast.Name):
                spread.add(id(n.value))
            elif isinstance(n, ast.Name) and id(n) not in spread:
                (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                bound.add(n.name)
            elif isinstance(n, ast.alias):
                bound.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                bound.add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                bound.add(n.rest)
    return bound, loaded

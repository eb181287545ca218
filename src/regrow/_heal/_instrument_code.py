"""The code of an instrumented function: its definition, read from its file, with the body inside a ``try``.

The text is compiled as it stands in the file — the same line numbers and columns, after a header of
blank lines (and, for a method, ``class Owner:``) — and must compile to the bytecode that is running,
else the file changed since import and the function is wrapped instead. Then its body is put inside
``try``/``except Exception`` whose handler calls the hook. The handler stands on the ``def`` line (a
tracer sees only the user's lines; a failure of the call run again after a fix is shown there), and
its bare ``raise`` keeps the traceback the body made. A generator's handler goes on with what the hook
gives (``yield from``: the rest of the fixed generator), so a generator is caught in its own frame too.

The arguments handed over are the parameters as they entered: read again in the handler where the
code never stores to them (a scan of its bytecode), else kept in a local at entry; a ``**kwargs``
dict the body uses other than as ``**kwargs`` is copied at entry (the body may change it in place).
"""

from __future__ import annotations

import ast
import inspect
import operator
import sys
import types
from tokenize import TokenError
from typing import Any

from .._target._fixed import fixed_code, source_lines
from .._target._source import FUTURE_FLAGS
from ._instrument_bytes import GENERATORS, PREFIX, keeps, plain, same_body, same_code, same_kept, same_shape, stored
from ._instrument_cache import keep, load
from ._instrument_splice import spliced

# Placeholders compiled as string constants, then replaced in the code's constants by the hook and by
# ``Exception``: the handler reaches them with no name lookup (a module may shadow any name).
HOOK = "__regrow_hook_placeholder_7f3a9c__"
CAUGHT = "__regrow_caught_placeholder_7f3a9c__"
_END = operator.itemgetter(1)  # of a position: its last line
_LINE = operator.itemgetter(2)  # of an entry of co_lines(): its line


def instrumented(func: types.FunctionType, hook: object, code: types.CodeType) -> types.CodeType | str:
    """``code`` (one of ``func``'s) with its body inside a ``try`` whose handler calls ``hook``; or why it
    cannot be (a string)."""
    made = spliced(func, code, hook, stored(code))  # 3.11-3.13: from the running bytes alone
    if made is not None:
        return made
    fix = fixed_code(code) is not None  # a fix is not the module's text: the cache of the module does not keep it
    made = None if fix else load(code, func.__globals__)  # kept by an earlier import (regrow._heal._instrument_cache)
    if made is None or not _fits(made, code):
        built = _instrumented(func, code, exact=True)
        built = _instrumented(func, code, exact=False) if built == _SHORT else built
        if isinstance(built, str):
            return built
        made = built
        if not fix:
            keep(code, func.__globals__, made)
    consts = tuple(hook if c == HOOK else Exception if c == CAUGHT else c for c in made.co_consts)
    made = made.replace(co_consts=consts)
    if sys.version_info >= (3, 11):
        made = made.replace(co_qualname=code.co_qualname)  # type: ignore[call-arg,attr-defined,unused-ignore]
    return made


def _fits(made: types.CodeType, code: types.CodeType) -> bool:
    """Whether ``made`` (read from the cache, whose key is ``code``'s bytecode and its module's text) is
    instrumented from ``code``: where it stands, its parameters, names, locals and constants, and its bytes
    where no parameter is kept at entry (they begin with ``code``'s; 3.10 enters the ``try`` first)."""
    return made.co_filename == code.co_filename and made.co_firstlineno == code.co_firstlineno and \
        made.co_name == code.co_name and len(made.co_code) > len(code.co_code) and \
        (same_shape(made, code, kept=True) if keeps(code) or sys.version_info < (3, 11) else same_body(made, code))


_SHORT = "the lines the code spans do not compile alone"


def _instrumented(func: types.FunctionType, code: types.CodeType, exact: bool) -> types.CodeType | str:
    """The instrumented code with its placeholders (what the cache keeps), or why it cannot be built."""
    block = _block(func, code, exact)
    if isinstance(block, str):
        return block
    lines, first = block
    indented = lines[0][:1] in (" ", "\t")
    owner = next(iter(func.__qualname__.split(".")[-2:-1]), "")
    owner = owner if owner.isidentifier() else ""
    head = [f"class {owner}:\n" if owner else "if 1:\n"] if indented else []
    wrap = owner if not indented else ""  # a fix's text is not indented: its class is put around it in the tree
    texts = []
    for imports in _imported(func, code):  # the compiler calls a method of an imported name another way
        header = [f"import {', '.join(imports)}\n"] if imports else []
        if first - 1 >= len(header) + len(head):
            texts.append("\n" * (first - 1 - len(header) - len(head)) + "".join([*header, *head, *lines]))
    if any(name.startswith(PREFIX) for name in (*code.co_varnames, *code.co_names, *code.co_cellvars)):
        return f"it already uses names starting with {PREFIX}"
    if not texts:
        return "no room above the definition for its scaffolding"
    flags = code.co_flags & FUTURE_FLAGS
    try:
        # Most often the body of the instrumented code is the running code's, byte for byte (for a plain function
        # that keeps parameters at entry, but for those copies and its locals' numbers): no other check.
        kept = keeps(code)
        # 3.10's hooked code enters the ``try`` first, so its bytes never begin with the running ones: compile the
        # text and compare it instead, at once, rather than after a hooked compile that cannot tell.
        tells = sys.version_info >= (3, 11) and (plain(code) or not kept)
        made = _hooked(ast.parse(texts[0]), indented, wrap, code, flags) if tells else None
        if made is None or not (same_kept(made, code) if kept else same_body(made, code)):
            made = None
            for text in texts:  # else the text that compiles to the running code is found first
                tree = ast.parse(text)
                compiled = _code_in(compile(_owned(tree, wrap) if wrap else tree, code.co_filename, "exec",
                                            flags=flags, dont_inherit=True), code)
                if compiled is not None and same_code(compiled, code):
                    made = _hooked(tree, indented, wrap, code, flags)
                    break
    except SyntaxError as exc:  # the definition may go on past the lines its code spans (a trailing string)
        return _SHORT if exact else f"its source does not compile alone: {exc.msg}"
    if made is None:
        return "its source does not compile to the code that is running (the file changed since import?)"
    if made.co_freevars != code.co_freevars:
        return "the instrumented code needs other closure cells"
    return made


def _hooked(tree: ast.Module, indented: bool, wrap: str, code: types.CodeType, flags: int) -> types.CodeType | None:
    """The code of the definition in ``tree`` with its body hooked (the placeholders not replaced yet)."""
    holder = tree.body[-1]
    node = holder.body[0] if isinstance(holder, (ast.ClassDef, ast.If)) else holder
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    node.body = _hooked_body(node, code)
    return _code_in(compile(tree if not wrap or isinstance(holder, ast.ClassDef) else _owned(tree, wrap),
                            code.co_filename, "exec", flags=flags, dont_inherit=True), code)


def _owned(tree: ast.Module, owner: str) -> ast.Module:
    """``tree``'s last statement inside ``class owner:`` (private names are mangled as there, and ``super()``
    gets its ``__class__`` cell)."""
    holder = ast.ClassDef(name=owner, bases=[], keywords=[], body=[tree.body[-1]], decorator_list=[])
    if sys.version_info >= (3, 12):
        holder.type_params = []
    ast.copy_location(holder, tree.body[-1])
    tree.body[-1] = holder
    return tree


def _block(func: types.FunctionType, code: types.CodeType, exact: bool) -> tuple[list[str], int] | str:
    """The lines of the definition (decorators included) and its first line's number; ``exact``: as far as
    its code reaches (no tokenizing to find the end)."""
    lines = source_lines(code, func.__globals__)  # an installed fix's lines are its own, not its file's
    start = code.co_firstlineno - 1
    if not lines or not 0 <= start < len(lines):
        return f"no source for {code.co_filename}:{code.co_firstlineno}"
    end = _last_line(code) if exact else 0
    if end > start:
        return lines[start:end], start + 1
    try:
        block = inspect.getblock(lines[start:])
    except (SyntaxError, TokenError) as exc:
        return f"its source cannot be read: {exc}"
    return (list(block), start + 1) if block else "its source is empty"


def _last_line(code: types.CodeType) -> int:
    """The last line any instruction of ``code`` (or of code inside it) spans; on 3.10, which keeps no end
    lines, the last line one starts on (the text cut there may end inside an expression: it then does not
    compile, and the block is found by tokenizing)."""
    if sys.version_info >= (3, 11):
        last = max(filter(None, map(_END, code.co_positions())), default=0)
    else:
        last = max(filter(None, map(_LINE, code.co_lines())), default=0)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _imported(func: types.FunctionType, code: types.CodeType) -> list[list[str]]:
    """The global names to declare imported, most likely first: those bound to modules or to objects of
    other modules, then modules only, then none."""
    names: set[str] = set()
    found = [code]
    while found:
        each = found.pop()
        names.update(each.co_names)
        found.extend(c for c in each.co_consts if isinstance(c, types.CodeType))
    values = func.__globals__
    modules = sorted(n for n in names if isinstance(values.get(n), types.ModuleType))
    foreign = sorted(n for n in names if n in values and not isinstance(values[n], types.ModuleType)
                     and getattr(values[n], "__module__", func.__module__) not in (func.__module__, None))
    attempts = [sorted({*modules, *foreign}), modules, []]
    return [a for i, a in enumerate(attempts) if a not in attempts[:i]]


def _code_in(top: types.CodeType, code: types.CodeType) -> types.CodeType | None:
    """The code object inside ``top`` that stands where ``code`` does."""
    found = [top]
    while found:
        each = found.pop()
        for const in each.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name == code.co_name and const.co_firstlineno == code.co_firstlineno:
                    return const
                found.append(const)
    return None


def _hooked_body(node: ast.FunctionDef | ast.AsyncFunctionDef, code: types.CodeType) -> list[ast.stmt]:
    """``node``'s body inside the ``try`` whose handler calls the hook; its docstring stays first.

    The handler stands on the ``def`` line: a tracer sees the user's lines, and a failure inside the handler
    (of the call run again after a fix) is shown there. The entry copies stand on the body's first line, which
    runs next anyway (no line event of their own)."""
    body = list(node.body)
    doc = body[:1] if _is_docstring(body[0]) else []
    rest = body[len(doc):] or [ast.copy_location(ast.Pass(), body[0])]
    first, last = rest[0], rest[-1]
    at: dict[str, Any] = {"lineno": node.lineno, "end_lineno": node.lineno, "col_offset": node.col_offset,
          "end_col_offset": node.col_offset + 3}
    start: dict[str, Any] = {"lineno": first.lineno, "end_lineno": first.lineno, "col_offset": first.col_offset,
             "end_col_offset": first.col_offset}
    kept = _kept(node, code)
    renamed = {name: f"{PREFIX}{index}" for index, name in enumerate(kept)}
    entry: list[ast.stmt] = [
        ast.Assign(targets=[ast.Name(renamed[name], ast.Store(), **start)],
                   value=ast.Dict(keys=[None], values=[ast.Name(name, ast.Load(), **start)], **start) if copy
                   else ast.Name(name, ast.Load(), **start), **start)
        for name, copy in kept.items()]
    positional, keywords = _parameters(node)

    def load(name: str) -> ast.expr:
        return ast.Name(renamed.get(name, name), ast.Load(), **at)

    args: list[ast.expr] = [ast.Starred(load(name), ast.Load(), **at) if star else load(name)
                            for name, star in positional]
    keys: list[ast.expr | None] = [None if star else ast.Constant(name, **at) for name, star in keywords]
    generator = bool(code.co_flags & GENERATORS)
    name = ("a" if isinstance(node, ast.AsyncFunctionDef) else "") + ("gcaught" if generator else "caught")
    call: ast.expr = ast.Call(ast.Attribute(ast.Constant(HOOK, **at), name, ast.Load(), **at),
                              [ast.Tuple(args, ast.Load(), **at), ast.Dict(keys, [load(n) for n, _ in keywords], **at)],
                              [], **at)
    if isinstance(node, ast.AsyncFunctionDef):
        call = ast.Await(call, **at)
    handler = ast.ExceptHandler(ast.Constant(CAUGHT, **at), None,
                                [ast.If(call, [ast.Raise(None, None, **at)], [], **at), *_after(code, at)], **at)
    hooked = ast.Try(rest, [handler], [], [], lineno=first.lineno, col_offset=first.col_offset,
                     end_lineno=last.end_lineno, end_col_offset=last.end_col_offset)
    return [*doc, *entry, hooked]


def _after(code: types.CodeType, at: dict[str, Any]) -> list[ast.stmt]:
    """What the handler does when the failure was handled: return the hook's result; a generator goes on with
    the items of the iterator it is (``yield from``; an async generator yields each)."""
    result = ast.Call(ast.Attribute(ast.Constant(HOOK, **at), "result", ast.Load(), **at), [], [], **at)
    if code.co_flags & inspect.CO_ASYNC_GENERATOR:
        item = f"{PREFIX}_item"
        each = ast.Expr(ast.Yield(ast.Name(item, ast.Load(), **at), **at), **at)
        return [ast.AsyncFor(ast.Name(item, ast.Store(), **at), result, [each], [], **at), ast.Return(None, **at)]
    if code.co_flags & inspect.CO_GENERATOR:
        return [ast.Return(ast.YieldFrom(result, **at), **at)]
    return [ast.Return(result, **at)]


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """The parameters handed over: positional, then keyword (``True``: starred)."""
    a = node.args
    positional = [(p.arg, False) for p in (*a.posonlyargs, *a.args)] + ([(a.vararg.arg, True)] if a.vararg else [])
    keywords = [(p.arg, False) for p in a.kwonlyargs] + ([(a.kwarg.arg, True)] if a.kwarg else [])
    return positional, keywords


def _kept(node: ast.FunctionDef | ast.AsyncFunctionDef, code: types.CodeType) -> dict[str, bool]:
    """The parameters to keep at entry, in the code's order (``True``: a ``**kwargs`` dict to copy)."""
    a = node.args
    # co_varnames order: positional, keyword-only, *args, **kwargs (the source's names: a private name is
    # mangled in co_varnames)
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [p.arg for p in (a.vararg, a.kwarg) if p]
    rebound = stored(code)
    kept = {name: False for index, name in enumerate(names)
            if index in rebound or code.co_varnames[index] in code.co_cellvars}
    if a.kwarg is not None and _used(node.body, a.kwarg.arg):
        kept[a.kwarg.arg] = True
    return kept


def _used(body: list[ast.stmt], name: str) -> bool:
    """Whether ``name`` is used in ``body`` other than spread into a call (``f(**name)``)."""
    spread: set[int] = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.keyword) and n.arg is None and isinstance(n.value, ast.Name):
                spread.add(id(n.value))
            elif isinstance(n, ast.Name) and n.id == name and id(n) not in spread:
                return True
    return False

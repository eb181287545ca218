"""The source of the code that is running: read once, checked against the live code object.

A file may be edited after its module was imported; healing the edited text would install code
nobody reviewed (or fail to find the function). So the text of a definition is taken from a
snapshot made when ``@heal`` decorated it (the file as it was at import), or else read now and
checked against the live code object — parameters, local names, constants, length: a definition
that no longer matches the code that is running is refused with the reason.

Indentation is handled with the tokenizer: a line that continues a multi-line string (a docstring
line at column 0 inside an indented method) is text, not indentation, and is left as it is.
"""

from __future__ import annotations
import __future__

import functools
import inspect
import io
import linecache
import sys
import threading
import tokenize
import types

from .._errors import TargetError

# Every __future__ feature's compiler flag: a definition is compiled with the ones its code was.
FUTURE_FLAGS = functools.reduce(
    lambda acc, name: acc | getattr(__future__, name).compiler_flag, __future__.all_feature_names, 0
)

_snapshots: dict[str, list[str]] = {}
_MAX_SNAPSHOTS = 512
_lock = threading.Lock()


def snapshot(func: types.FunctionType) -> None:
    """Keep the text of ``func``'s file as it is now (at decoration, that is, at import)."""
    filename = func.__code__.co_filename
    with _lock:
        if filename in _snapshots or len(_snapshots) >= _MAX_SNAPSHOTS:
            return
        lines = linecache.getlines(filename, func.__globals__)
        if lines:
            _snapshots[filename] = list(lines)


def _string_continuations(text: str) -> set[int]:
    """Line numbers (1-based) that begin inside a multi-line string token."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            stringy = token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", None)
            if stringy and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return inside
    return inside


def dedent(text: str, indent: str) -> str:
    """``text`` with ``indent`` taken off every line that is code (string continuations kept as they are)."""
    if not indent:
        return text
    keep = _string_continuations(text)
    lines = text.splitlines(keepends=True)
    return "".join(line if number in keep or not line.startswith(indent) else line[len(indent):]
                   for number, line in enumerate(lines, start=1))


def reindent(text: str, indent: str) -> str:
    """``text`` with ``indent`` put before every non-blank code line (string continuations kept)."""
    if not indent:
        return text
    keep = _string_continuations(text)
    return "".join(line if number in keep or not line.strip() else indent + line
                   for number, line in enumerate(text.splitlines(keepends=True), start=1))


def definition(func: types.FunctionType) -> tuple[str, int, str]:
    """``(text, first line, indent)`` of ``func``'s definition, decorators included, dedented.

    Raises :class:`TargetError` when it cannot be read, or when it no longer matches the code that
    is running (the file was edited after import).
    """
    code = func.__code__
    lines = _snapshots.get(code.co_filename)
    if lines is None:
        try:
            lines = inspect.findsource(func)[0]
        except (OSError, TypeError) as exc:
            raise TargetError(f"the source of {func.__module__}.{func.__qualname__} cannot be read: {exc}") from exc
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        raise TargetError(f"the source of {func.__qualname__} in {code.co_filename} changed since it was imported: "
                          f"line {code.co_firstlineno} is past its end; regrow heals the code that is running")
    block = inspect.getblock(lines[start:])
    first = block[0] if block else ""
    indent = first[: len(first) - len(first.lstrip())]
    text = dedent("".join(block), indent)
    mismatch = _mismatch(func, text)
    if mismatch:
        raise TargetError(f"the source of {func.__qualname__} in {code.co_filename} does not match the code that is "
                          f"running ({mismatch}): the file changed since it was imported. regrow heals the code that "
                          "is running; reload the module (or restart) to heal the new text")
    return text, start + 1, indent


def _mismatch(func: types.FunctionType, text: str) -> str:
    """Why ``text`` is not the source of ``func``'s code, or ``""`` when it is (as far as can be told)."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return f"it does not parse: {exc.msg}"
    node = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None or node.name != func.__name__:
        return f"no definition of {func.__name__} at line {func.__code__.co_firstlineno}"
    try:  # decorators included: compiling does not run them, and the first line is theirs in both
        made = compile(ast.Module(body=[node], type_ignores=[]), func.__code__.co_filename, "exec",
                       flags=func.__code__.co_flags & FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:  # e.g. `nonlocal` or `super()` only valid in its real scope
        return "" if "nonlocal" in str(exc.msg) else f"it does not compile: {exc.msg}"
    compiled = next((c for c in made.co_consts if isinstance(c, types.CodeType) and c.co_name == func.__name__),
                    None)
    if compiled is None:
        return f"no code for {func.__name__}"
    return _compare(_written(func), compiled)


def _written(func: types.FunctionType) -> types.CodeType:
    """The code of ``func`` as written: for a function ``@heal`` instrumented, the code it instrumented."""
    hook = getattr(getattr(func, "__regrow__", None), "hook", None)
    plain = getattr(hook, "plain", None)
    return plain if isinstance(plain, types.CodeType) and func.__code__ is getattr(hook, "code", None) \
        else func.__code__


def _compare(live: types.CodeType, compiled: types.CodeType) -> str:
    if (live.co_argcount, live.co_kwonlyargcount, live.co_posonlyargcount) != \
            (compiled.co_argcount, compiled.co_kwonlyargcount, compiled.co_posonlyargcount):
        return "its parameters differ"
    if live.co_varnames[: live.co_nlocals] != compiled.co_varnames[: compiled.co_nlocals] and \
            not (live.co_freevars or live.co_cellvars or compiled.co_cellvars):
        return "its local variables differ"
    if _constants(live) != _constants(compiled):
        return "its constants differ"
    # Bytecode itself is not compared: the same text compiles differently alone and in its module
    # (method-call forms, jump offsets). An edit that changes only an operator is caught by the
    # snapshot @heal takes at import, not here.
    if _span(live) != _span(compiled):
        return "its length differs"
    return ""


def _span(code: types.CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max(lines) - code.co_firstlineno if lines else 0


def _constants(code: types.CodeType) -> list[object]:
    found: list[object] = []
    previous: object = None
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.append(("code", const.co_name, tuple(_constants(const))))
        elif (sys.version_info < (3, 11) and isinstance(previous, types.CodeType) and isinstance(const, str)
              and const.endswith(previous.co_name)):
            # 3.10 keeps a nested function's qualified name after its code: `_Multi.todict.<locals>.<dictcomp>`
            # in the class, `todict.<locals>.<dictcomp>` compiled alone. Only its own name is the text's.
            found.append(("qualname", previous.co_name))
        else:
            found.append((type(const).__name__, repr(const)))
        previous = const
    return found

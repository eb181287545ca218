"""Proven fixes where the user's code stands, and the text each one was made from.

A candidate is compiled under a ``<regrow module.f #N>`` name with its lines counted from its own
``def`` (the sandbox tells a candidate's frames by that name). A fix that is installed to last is
moved to the function's file instead, its ``def`` on the ``def``'s line: a later failure's traceback,
a debugger and coverage show the user's file and lines (the text shown at a changed line is the
file's until the fix is written back, as after any edit of a file since import).

The file no longer holds the code that runs, so each installed fix is remembered here with its text:
a later repair of the function starts from the fix (a second bug is one edit away from it, not from
the code before the fix), the instrumenter reads the fix's lines from here, and write-back still knows
the definition's text in the file.
"""

from __future__ import annotations

import dataclasses
import linecache
import threading
import types
import weakref
from typing import Any


@dataclasses.dataclass
class Fixed:
    """An installed fix as it stands in its function's file."""

    text: str  # its definition, decorators included, dedented: what a later repair starts from
    lineno: int  # the definition's first line in the file (its first decorator's)
    indent: str  # the definition's indentation in the file
    filename: str  # the file, as a Target names it
    written: str  # the definition's text in the file: the code before the fix, unless it was written back
    lines: list[str]  # the fix's own lines where they stand in the file (earlier lines blank)


_fixes: weakref.WeakKeyDictionary[types.CodeType, Fixed] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def moved(code: types.CodeType, filename: str, shift: int) -> types.CodeType:
    """``code`` (and the code inside it) named ``filename``, every line ``shift`` lines further down.

    A code object's line table counts from its first line, so moving that line moves every line, column
    positions untouched, and the bytecode stays what was proven."""
    consts = tuple(moved(const, filename, shift) if isinstance(const, types.CodeType) else const
                   for const in code.co_consts)
    return code.replace(co_filename=filename, co_firstlineno=code.co_firstlineno + shift, co_consts=consts)


def remember(code: types.CodeType, fixed: Fixed) -> None:
    with _lock:
        _fixes[code] = fixed


def fixed_code(code: types.CodeType) -> Fixed | None:
    """What :func:`remember` keeps of ``code``, if it is an installed fix."""
    with _lock:
        return _fixes.get(code)


def fix_of(func: types.FunctionType) -> Fixed | None:
    """The installed fix ``func`` runs, if it runs one (for a function ``@heal`` instrumented: the code it was
    instrumented from)."""
    hook = getattr(getattr(func, "__regrow__", None), "hook", None)
    plain = getattr(hook, "plain", None)
    code = plain if isinstance(plain, types.CodeType) and func.__code__ is getattr(hook, "code", None) \
        else func.__code__
    return fixed_code(code)


def source_lines(code: types.CodeType, globals_: dict[str, Any]) -> list[str]:
    """The lines ``code``'s line numbers index: an installed fix's own, else its file's (``linecache``)."""
    fixed = fixed_code(code)
    return fixed.lines if fixed is not None else linecache.getlines(code.co_filename, globals_)

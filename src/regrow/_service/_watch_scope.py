"""Which code ``regrow.watch`` looks after, and how a failing frame becomes a call to repair.

The user's code is decided twice, both cheap: by file (a code object's file lies under a watched
package's folder or a watched folder, and not under the standard library, site-packages or regrow
itself) when an exception leaves a frame; and by module name (a function's ``__module__`` is a
watched package or inside one) before anything is repaired.
"""

from __future__ import annotations

import copy
import dis
import gc
import importlib.util
import inspect
import os
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .._errors import RegrowError
from .._frames import users_file


class Scope:
    """The packages and folders that are the user's own code."""

    def __init__(self, packages: Sequence[str], folders: Sequence[str | Path]) -> None:
        if not packages and not folders:
            raise RegrowError("watch() needs a package name or a folder: it heals only your own code")
        self.packages = tuple(packages)
        roots = [os.path.abspath(folder) for folder in folders]
        for package in self.packages:
            roots.extend(_package_dirs(package))
        for root in roots:
            if not users_file(os.path.join(root, "__init__.py")):
                raise RegrowError(f"{root} is installed with the standard library or site-packages; watch() heals "
                                  "only code run from source (an editable install or the project folder)")
        # A folder covers what is under it; a single module's file (watch("tool") for tool.py) only itself.
        self.roots = tuple(root.rstrip(os.sep) + os.sep for root in roots if not os.path.isfile(root))
        self.modules = frozenset(root for root in roots if os.path.isfile(root))
        self._files: dict[str, bool] = {}  # co_filename -> watched: the hot path is one dict lookup

    def covers_file(self, filename: str) -> bool:
        """Whether code from ``filename`` is the user's (cached: exceptions of any code ask this)."""
        known = self._files.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            known = (path in self.modules or path.startswith(self.roots)) and users_file(filename)
            self._files[filename] = known
        return known

    def covers_code(self, code: types.CodeType) -> bool:
        return self.covers_file(code.co_filename)

    def covers_function(self, func: types.FunctionType) -> bool:
        """Whether ``func`` is the user's: its file, and (when packages were named) its module's name."""
        if not self.covers_code(func.__code__):
            return False
        module = func.__module__ or ""
        if not self.packages or module == "__main__":
            return True  # a folder (``regrow run script.py``): the file decides
        return any(module == p or module.startswith(p + ".") for p in self.packages)


def _package_dirs(package: str) -> list[str]:
    """The folders of ``package`` (found without running it where it is not imported yet)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as exc:
        raise RegrowError(f"watch(): cannot find the package {package!r}: {exc}") from exc
    if spec is None:
        raise RegrowError(f"watch(): no package or module named {package!r} is importable")
    if spec.submodule_search_locations:
        return [os.path.abspath(p) for p in spec.submodule_search_locations]
    if spec.origin and os.path.isfile(spec.origin):
        return [os.path.abspath(spec.origin)]  # a single module: its file is the root
    raise RegrowError(f"watch(): {package!r} has no source files to watch")


_COMPREHENSIONS = frozenset({"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"})


def innermost(tb: types.TracebackType | None, scope: Scope) -> types.FrameType | None:
    """The innermost frame of the traceback that runs the user's code: the function that failed. A generator
    expression or comprehension is part of the function whose frame ran it (the one before it in the
    traceback), which is what is repaired: on its own it is nested code no repair can install."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if scope.covers_code(code) and code.co_name not in _COMPREHENSIONS:
            found = tb.tb_frame
        tb = tb.tb_next
    return found


def function_of(code: types.CodeType, namespace: dict[str, Any]) -> types.FunctionType | None:
    """The live function whose ``__code__`` is ``code``: its module's names and classes first, then any
    function the garbage collector knows (a nested function, a function held elsewhere)."""
    for value in list(namespace.values()):
        candidates: Iterable[Any] = [value]
        if isinstance(value, type):
            candidates = list(vars(value).values())
        for candidate in candidates:
            found = _match(candidate, code)
            if found is not None:
                return found
    for referrer in gc.get_referrers(code):
        if isinstance(referrer, types.FunctionType) and referrer.__code__ is code:
            return referrer
    return None


def _match(obj: Any, code: types.CodeType) -> types.FunctionType | None:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    for _ in range(8):  # through functools.wraps wrappers (the 3.10/3.11 hook's among them)
        if isinstance(obj, types.FunctionType) and obj.__code__ is code:
            return obj
        obj = getattr(obj, "__wrapped__", None)
        if obj is None:
            return None
    return None


def reassigned(code: types.CodeType) -> list[str]:
    """Parameters the body stores to or deletes: after such a store the frame no longer holds the argument."""
    params = set(_parameters(code))
    stored: set[str] = set()
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(("STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF")):
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            stored.update(name for name in names if name in params)
    return sorted(stored)


def _parameters(code: types.CodeType) -> tuple[str, ...]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


def arguments(frame: types.FrameType) -> tuple[tuple[Any, ...], dict[str, Any]] | str:
    """The call's arguments rebuilt from the failed frame's locals (deep copies), or why they cannot be.

    The frame holds the parameters' values at the time of the failure, not at entry: a body that
    assigns to a parameter makes them unknowable (refused), and a body that changed an argument in
    place is caught later, when the original is run on them (regrow._proof._policy.guard). Only the code
    object is read, so this is cheap enough to run as the exception leaves.
    """
    code = frame.f_code
    changed = reassigned(code)
    if changed:
        return (f"refused: {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name} assigns to its "
                f"parameter(s) {', '.join(changed)}, so the failed frame does not hold the arguments it was called "
                "with; decorate it with @regrow.heal instead")
    values = frame.f_locals
    names = code.co_varnames
    positional, kwonly = code.co_argcount, code.co_kwonlyargcount
    try:
        args = [values[name] for name in names[:positional]]
        kwargs = {name: values[name] for name in names[positional:positional + kwonly]}
        extra = positional + kwonly
        if code.co_flags & inspect.CO_VARARGS:
            args.extend(values[names[extra]])
            extra += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            kwargs.update(values[names[extra]])
        copied: tuple[tuple[Any, ...], dict[str, Any]] = copy.deepcopy((tuple(args), kwargs))
        return copied
    except KeyError as missing:
        return f"refused: the failed frame of {code.co_name} no longer holds the argument {missing}"
    except Exception as exc:  # an argument that cannot be copied: later changes would alter the evidence
        return f"refused: the arguments of {code.co_name} cannot be copied ({type(exc).__name__}: {exc})"

"""The function being healed: where it lives, its source, and how a candidate becomes its code.

A proven fix is installed by replacing ``__code__`` (and the defaults) of the *live* function
object, so every existing reference — ``from mod import f``, bound methods, callbacks registered
before the failure — runs the fix. Reading source and compiling happen only after a failure.
"""

from __future__ import annotations
import __future__

import ast
import collections
import dataclasses
import functools
import inspect
import itertools
import linecache
import logging
import sys
import textwrap
import threading
import types
from collections.abc import Callable
from typing import Any, Literal

from .._errors import TargetError
from ._fixed import Fixed, fix_of, moved, remember
from ._source import FUTURE_FLAGS, dedent, definition, reindent
from ._unwrap import unwrap

log = logging.getLogger("regrow")

_SCOPE = "__regrow_scope__"
_serial = itertools.count(1)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
InstallMode = Literal["code", "rebind"]


@dataclasses.dataclass(eq=False)
class Target:
    """A healable function, with its source read once.

    Build one with :meth:`of` (from a function object) or :meth:`from_ref` (from ``path.py::qualname``).
    """

    func: types.FunctionType
    owner: type | None
    filename: str
    lineno: int  # first line of the definition in the file, decorators included
    source: str  # the definition as written (dedented), decorators included
    indent: str  # the indentation the definition has in the file
    original_code: types.CodeType
    original_defaults: tuple[Any, ...] | None
    original_kwdefaults: dict[str, Any] | None
    # What callers call, when that is not the function itself: heal standing above another decorator
    # (a functools.wraps wrapper, an lru_cache). Checks call it, so the decorator's part runs as it does.
    entry: Callable[..., Any] | None = None
    # The definition's text in the file when it is not ``source``: the function runs a fix regrow installed
    # (``source`` is the fix's text) and the file still holds the code before it (regrow._target._fixed).
    written: str | None = None

    @classmethod
    def of(cls, obj: Any) -> Target:
        func = unwrap(obj)
        fixed = fix_of(func)
        if fixed is not None:  # a later repair starts from the fix that runs, not from the file's text
            text, lineno, indent = fixed.text, fixed.lineno, fixed.indent
        else:
            text, lineno, indent = definition(func)
        return cls(
            func=func,
            owner=_owner_class(func),
            filename=fixed.filename if fixed is not None else inspect.getsourcefile(func) or func.__code__.co_filename,
            lineno=max(lineno, 1),
            source=text,
            indent=indent,
            original_code=func.__code__,
            original_defaults=func.__defaults__,
            original_kwdefaults=func.__kwdefaults__,
            written=fixed.written if fixed is not None and fixed.written != text else None,
        )

    @classmethod
    def from_ref(cls, ref: str) -> Target:
        """Resolve ``path/to/module.py::qualname`` (or ``package.module::qualname``) and read it."""
        from ._locate import resolve

        return cls.of(resolve(ref))

    @property
    def name(self) -> str:
        return self.func.__name__

    @property
    def file_source(self) -> str:
        """The definition's text in the file as far as regrow knows (dedented, decorators included)."""
        return self.written if self.written is not None else self.source

    @property
    def qualname(self) -> str:
        return self.func.__qualname__

    @property
    def module(self) -> str:
        return self.func.__module__

    @property
    def is_async(self) -> bool:
        return bool(self.original_code.co_flags & inspect.CO_COROUTINE)

    @functools.cached_property
    def node(self) -> FunctionNode:
        """The definition's AST (line 1 is the first decorator's line)."""
        return find_function(self.source, self.name)

    @functools.cached_property
    def bare_source(self) -> str:
        """The definition without its decorators, comments and formatting kept."""
        start = self.node.lineno - 1
        return "".join(self.source.splitlines(keepends=True)[start:])

    @property
    def def_lineno(self) -> int:
        """The file line of the ``def`` keyword."""
        return self.lineno + self.node.lineno - 1

    def compile(self, source: str) -> types.FunctionType:
        """Compile candidate ``source`` into a function for this target's namespace.

        The result shares the target's globals and closure cells, gets a ``__class__`` cell so that
        ``super()`` works, has private names mangled as in the owner class, and keeps the original
        default objects where the candidate did not change the default expressions.
        Raises ``SyntaxError``/``ValueError`` for source that is not a function of this name.
        """
        node = find_function(source, self.name)
        node.decorator_list = []
        return self.compile_node(node, source, _defaults_dump(node) == _defaults_dump(self.node))

    def placed(self, fn: types.FunctionType, source: str) -> types.FunctionType:
        """``fn``, compiled from ``source`` and proven, moved to where the function stands in its file, to install
        for good (see regrow._target._fixed): its ``def`` on the ``def``'s line, named after the file."""
        code = fn.__code__
        shift = self.def_lineno - code.co_firstlineno
        made = moved(code, self.original_code.co_filename, shift)
        lines = source.splitlines(keepends=True)
        text = dedent(self.as_file_text(source), self.indent)
        remember(made, Fixed(text, self.lineno, self.indent, self.filename, self.file_source,
                             ["\n"] * shift + lines if shift >= 0 else lines[-shift:]))
        fn.__code__ = made
        return fn

    def compile_node(self, node: FunctionNode, source: str, same_defaults: bool) -> types.FunctionType:
        """:meth:`compile` of the definition ``node`` (without decorators), whose text is ``source``;
        ``same_defaults``: its default expressions are the original's. ``node`` is left as it was."""
        defaults, kw_defaults = node.args.defaults, node.args.kw_defaults
        if same_defaults:  # the original default objects are used: their expressions need not run again
            _placeholder_defaults(node)  # (one may name a private class attribute, `__marker`, say)
        try:
            made = self._evaluate(node, source)
        finally:
            node.args.defaults, node.args.kw_defaults = defaults, kw_defaults
        closure = self._closure_for(made.__code__)
        fn = types.FunctionType(
            made.__code__,
            self.func.__globals__,
            self.name,
            self.original_defaults if same_defaults else made.__defaults__,
            closure,
        )
        fn.__kwdefaults__ = self.original_kwdefaults if same_defaults else made.__kwdefaults__
        fn.__qualname__ = self.qualname
        fn.__module__ = self.module
        fn.__doc__ = made.__doc__
        fn.__annotations__ = dict(self.func.__annotations__)
        return fn

    def _evaluate(self, node: FunctionNode, source: str) -> types.FunctionType:
        """Execute the definition inside a synthetic scope that mirrors the original's.

        Free variables of the original become locals of the scope (so the candidate closes over
        them); a module-level function's own name is declared global there, so recursion stays a
        global lookup as in the original; a method is defined inside a class of its owner's name,
        for private-name mangling and the ``__class__`` cell.
        """
        free = [name for name in self.original_code.co_freevars if name != "__class__"]
        body: list[ast.stmt] = []
        if free:
            targets: list[ast.expr] = [ast.Name(name, ast.Store()) for name in free]
            body.append(ast.Assign(targets=targets, value=ast.Constant(None)))
        holder: list[ast.stmt] = body
        if self.owner is not None:
            owner = ast.ClassDef(name=self.owner.__name__, bases=[], keywords=[], body=[], decorator_list=[])
            if sys.version_info >= (3, 12):
                owner.type_params = []
            body.append(owner)
            holder = owner.body
            result: ast.expr = ast.Subscript(
                ast.Attribute(ast.Name(self.owner.__name__, ast.Load()), "__dict__", ast.Load()),
                ast.Constant(_mangled(self.name, self.owner.__name__)),
                ast.Load(),
            )
            if self.owner.__name__ not in free:  # the class's own name stays a global lookup, as in the original
                body.insert(0, ast.Global([self.owner.__name__]))
        else:
            body.insert(0, ast.Global([self.name]))
            result = ast.Name(self.name, ast.Load())
        body.append(ast.Return(result))
        scope = ast.FunctionDef(
            name=_SCOPE,
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=body,
            decorator_list=[],
            returns=None,
            type_comment=None,
        )
        if sys.version_info >= (3, 12):
            scope.type_params = []
        module = ast.Module(body=[scope], type_ignores=[])
        ast.fix_missing_locations(module)  # only the scaffolding: the candidate has its own locations
        holder.insert(len(holder) - (1 if holder is body else 0), node)
        filename = f"<regrow {self.module}.{self.qualname} #{next(_serial)}>"
        _register_source(filename, source)
        # Annotations stay strings: a candidate's annotation is never evaluated (the original's are kept).
        flags = (self.original_code.co_flags & FUTURE_FLAGS) | __future__.annotations.compiler_flag
        code = compile(module, filename, "exec", flags=flags, dont_inherit=True)
        scratch: dict[str, Any] = dict(self.func.__globals__)
        exec(code, scratch)
        made = scratch[_SCOPE]()
        if not isinstance(made, types.FunctionType):
            raise ValueError(f"the candidate did not define a plain function {self.name!r}")
        return made

    def _closure_for(self, code: types.CodeType) -> tuple[types.CellType, ...] | None:
        if not code.co_freevars:
            return None
        live = dict(zip(self.original_code.co_freevars, self.func.__closure__ or (), strict=True))
        cells = []
        for name in code.co_freevars:
            if name in live:
                cells.append(live[name])
            elif name == "__class__" and self.owner is not None:
                cells.append(types.CellType(self.owner))
            else:
                raise ValueError(f"the candidate uses the free variable {name!r}, which the original has no cell for")
        return tuple(cells)

    def install(self, fn: types.FunctionType, lasting: bool = True) -> InstallMode:
        """Make the live function run ``fn``'s code (``lasting=False``: only while it is judged).

        Returns ``"code"`` when ``__code__`` was swapped in place (every reference sees the fix) or
        ``"rebind"`` when the free variables differ and the caller must rebind the name instead.
        """
        live = self.func
        if fn.__code__.co_freevars != live.__code__.co_freevars or (fn.__closure__ or ()) != (live.__closure__ or ()):
            return "rebind"
        live.__code__ = fn.__code__
        live.__defaults__ = fn.__defaults__
        live.__kwdefaults__ = fn.__kwdefaults__
        if lasting:
            _pin_source(fn.__code__.co_filename)
            hook = getattr(getattr(live, "__regrow__", None), "hook", None)
            if hook is not None:  # a function @heal instrumented stays instrumented (regrow._heal._instrument)
                hook.rehook(live)
        return "code"

    def rebind(self, fn: types.FunctionType) -> None:
        """Put ``fn`` where the original is found by name (its module or class)."""
        holder: Any = self.owner if self.owner is not None else sys.modules.get(self.module)
        if holder is None:
            raise TargetError(f"cannot rebind {self.qualname}: module {self.module} is not loaded")
        current = inspect.getattr_static(holder, self.name, None)
        _pin_source(fn.__code__.co_filename)
        if isinstance(current, staticmethod):
            setattr(holder, self.name, staticmethod(fn))
        elif isinstance(current, classmethod):
            setattr(holder, self.name, classmethod(fn))
        else:
            setattr(holder, self.name, fn)
        log.warning(
            "%s could not be patched in place (its free variables changed); rebound the name in %s — "
            "references taken earlier keep the old code", self.qualname, getattr(holder, "__name__", holder),
        )

    def restore(self) -> None:
        """Put the original code and defaults back."""
        self.func.__code__ = self.original_code
        self.func.__defaults__ = self.original_defaults
        self.func.__kwdefaults__ = self.original_kwdefaults

    def as_file_text(self, source: str) -> str:
        """``source`` (a bare definition) with the original decorators and indentation, as in the file."""
        decorators = "".join(self.source.splitlines(keepends=True)[: self.node.lineno - 1])
        text = decorators + textwrap.dedent(source)
        if not text.endswith("\n"):
            text += "\n"
        return reindent(text, self.indent)


# Candidate sources are registered with linecache so tracebacks through them show their lines.
# Most candidates are thrown away at once: keep a bounded window of them, and pin installed fixes.
_KEEP_SOURCES = 256
_recent_sources: collections.deque[str] = collections.deque()
_pinned_sources: set[str] = set()
_sources_lock = threading.Lock()


def _register_source(filename: str, source: str) -> None:
    with _sources_lock:
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        _recent_sources.append(filename)
        while len(_recent_sources) > _KEEP_SOURCES:
            old = _recent_sources.popleft()
            if old not in _pinned_sources:
                linecache.cache.pop(old, None)


def _pin_source(filename: str) -> None:
    with _sources_lock:
        _pinned_sources.add(filename)


def _mangled(name: str, owner: str) -> str:
    """``name`` as a class body stores it: ``__touch`` in ``LFUCache`` is ``_LFUCache__touch``."""
    if name.startswith("__") and not name.endswith("__") and owner.lstrip("_"):
        return f"_{owner.lstrip('_')}{name}"
    return name


def _placeholder_defaults(node: FunctionNode) -> None:
    args = node.args
    args.defaults = [ast.copy_location(ast.Constant(None), d) for d in args.defaults]
    args.kw_defaults = [None if d is None else ast.copy_location(ast.Constant(None), d) for d in args.kw_defaults]


def find_function(source: str, name: str) -> FunctionNode:
    """The single top-level definition of ``name`` in ``source``."""
    tree = ast.parse(textwrap.dedent(source))
    found = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    if not found:
        raise ValueError(f"no function named {name!r} in the candidate")
    return found[-1]


def _defaults_dump(node: FunctionNode) -> str:
    args = node.args
    return ast.dump(ast.Tuple([*args.defaults, *(d for d in args.kw_defaults if d is not None)], ast.Load()))


def _owner_class(func: types.FunctionType) -> type | None:
    parts = func.__qualname__.split(".")
    if len(parts) < 2:
        return None
    obj: Any = sys.modules.get(func.__module__)
    for part in parts[:-1]:
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None

"""AST rails: a cheap pre-filter that rejects obvious hazards in candidate source before it runs.

This is not the security boundary. Python offers too many ways to reach anything for a static
check to catch them all; the runtime guard of the sandbox (``regrow._sandbox._guard``) is what
keeps the host safe. The rails only save the time of running a candidate that is plainly
reaching for ``eval``, the file system, processes or the network.

``check_source`` returns reasons (empty means nothing was found). In the default, moderate mode
it flags ``eval``/``exec``/``compile``/``__import__``, dunder escape hatches (also when reached
through ``getattr`` with a name built from constants) and imports of modules that reach outside
the process. In strict mode it flags every import outside a small allowlist and every
``getattr``/``setattr``/``delattr`` with a computed name. Aliases are resolved:
``import os as o; o.system(...)`` and ``from os import system as s; s(...)`` are both seen as
``os.system``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

_DYNAMIC_CODE = frozenset({"eval", "exec", "compile", "__import__"})
# Builtins that reach the interpreter's namespaces, the terminal or the file system. The moderate
# mode flags them too: in a candidate they are only a problem where the original did not use them
# already, which is what ``new_reasons`` reports.
_REACHING_BUILTINS = frozenset({"globals", "locals", "vars", "breakpoint", "open", "input"})
_STRICT_BUILTINS = frozenset({*_REACHING_BUILTINS, "memoryview"})
_ESCAPE_HATCHES = frozenset(
    {
        "__globals__", "__builtins__", "__subclasses__", "__code__", "__closure__", "__bases__", "__mro__",
        "__base__", "__dict__", "__getattribute__", "__loader__", "__spec__", "__import__", "__reduce__",
        "__reduce_ex__", "f_globals", "f_locals", "f_builtins", "f_back", "gi_frame", "cr_frame", "ag_frame",
        "tb_frame", "co_code", "f_code", "f_trace", "__traceback__", "_getframe", "_current_frames", "settrace",
        "setprofile", "modules", "__self__", "__func__", "__wrapped__", "__defaults__", "__kwdefaults__",
        "tb_next", "gi_code", "gi_yieldfrom", "cr_code", "cr_await", "cr_origin", "ag_code", "ag_await", "f_lasti",
        "co_filename", "co_consts", "co_names", "co_varnames", "co_name", "co_qualname",
    }
)  # fmt: skip
# Modules that reach outside the process (files, processes, network, raw memory) or into the interpreter.
_DENIED_MODULES = frozenset(
    {
        "os", "posix", "nt", "subprocess", "socket", "ctypes", "pickle", "marshal", "importlib", "shutil",
        "signal", "builtins", "multiprocessing", "pty", "_posixsubprocess", "gc", "code", "codeop", "runpy",
        "resource", "fcntl", "mmap", "shelve", "dbm", "ftplib", "smtplib", "telnetlib", "ssl", "_thread",
        # reaching into the running checks: frames, the heap, the test modules
        "inspect", "sys", "__main__", "threading", "_interpreters", "_xxsubinterpreters", "interpreters",
        "pytest", "_pytest", "unittest", "regrow", "tracemalloc", "faulthandler", "atexit", "io", "pathlib",
        "tempfile", "glob", "linecache", "webbrowser",
    }
)  # fmt: skip
_STRICT_ALLOWED = frozenset(
    {
        "__future__", "math", "cmath", "decimal", "fractions", "numbers", "statistics", "random", "re", "string",
        "textwrap", "unicodedata", "difflib", "collections", "heapq", "bisect", "array", "itertools", "functools",
        "operator", "dataclasses", "enum", "typing", "typing_extensions", "abc", "copy", "datetime", "calendar",
        "time", "json", "base64", "binascii", "hashlib", "zlib", "struct", "contextlib", "warnings", "pprint",
        "reprlib", "graphlib",
    }
)  # fmt: skip
_REFLECTION = frozenset({"getattr", "setattr", "delattr", "hasattr"})
# getattr in other clothes, and helpers that copy attributes onto other objects (strict mode).
_REFLECTIVE_HELPERS = frozenset({"operator.attrgetter", "operator.methodcaller"})
_ATTRIBUTE_WRITERS = frozenset({"functools.update_wrapper", "functools.wraps", "copyreg.pickle"})
# Functions of otherwise harmless modules that open files.
_FILE_OPENERS = frozenset({"codecs.open", "tokenize.open", "gzip.open", "bz2.open", "lzma.open", "fileinput.input"})
_VIA_BUILTINS = frozenset(f"builtins.{name}" for name in _DYNAMIC_CODE | _REFLECTION)


def check_source(source: str, strict: bool = False, allow: Iterable[str] = (),
                 known: Mapping[str, str] | None = None) -> list[str]:
    """Reasons to reject ``source`` before running it; an empty list means the rails found nothing.

    ``allow`` names extra modules (top-level names) a candidate may import, e.g. the target's own
    package; it widens both modes. ``known`` maps names the code finds in its module's globals to the
    modules they are (``{"o": "os"}`` after ``import os as o`` at module level), so that
    ``o.system(...)`` is seen as ``os.system`` without an import in the candidate.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: syntax error: {exc.msg}"]
    except (RecursionError, MemoryError):
        return ["the source is nested too deeply to check"]
    rails = _Rails(strict, frozenset(allow))
    rails.aliases.update(known or {})
    try:
        rails.visit(tree)
    except RecursionError:  # a 3,000-term sum parses, and is deeper than a visitor can walk
        return ["the source is nested too deeply to check"]
    return list(dict.fromkeys(rails.reasons))  # keep order, drop repeats


def new_reasons(original: str, candidate: str, known: Mapping[str, str] | None = None,
                strict: bool = False) -> list[str]:
    """The rails' reasons against ``candidate`` that do not hold for ``original`` already.

    A candidate keeps what the user's own code does (it may call ``open`` if the original did);
    what it adds is what the rails judge.
    """
    def bare(reason: str) -> str:
        return reason.partition(": ")[2] if reason.startswith("line ") else reason

    before = {bare(reason) for reason in check_source(original, strict, known=known)}
    return [reason for reason in check_source(candidate, strict, known=known) if bare(reason) not in before]


def module_names(namespace: Mapping[str, object]) -> dict[str, str]:
    """Names in a module's globals that are modules, mapped to the modules' names (for ``known``)."""
    import types

    return {name: value.__name__ for name, value in namespace.items() if isinstance(value, types.ModuleType)}


class _Rails(ast.NodeVisitor):
    def __init__(self, strict: bool, allow: frozenset[str]) -> None:
        self.strict = strict
        self.allow = allow
        self.reasons: list[str] = []
        self.aliases: dict[str, str] = {}  # local name -> dotted name it stands for
        self.depth = 0  # how many function definitions enclose the node being visited

    def flag(self, node: ast.AST, reason: str) -> None:
        self.reasons.append(f"line {getattr(node, 'lineno', '?')}: {reason}")

    # -- imports ---------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.partition(".")[0]
            # `import os.path` binds `os`; `import os.path as p` binds `p` to `os.path`
            self.aliases[alias.asname or top] = alias.name if alias.asname else top
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # a relative import stays inside the target's own package
            return
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
            if alias.name == "*":
                self.flag(node, f"star import from {module}")
            elif module == "builtins" and alias.name in _DYNAMIC_CODE:
                self.flag(node, f"import of builtins.{alias.name}")

    def _check_module(self, node: ast.AST, name: str) -> None:
        top = name.partition(".")[0]
        if top in self.allow:
            return
        if self.strict and top not in _STRICT_ALLOWED:
            self.flag(node, f"import of {name} (not in the strict allowlist)")
        elif not self.strict and top in _DENIED_MODULES:
            self.flag(node, f"import of {name}")

    # -- names, attributes, calls ----------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        resolved = self.aliases.get(node.id, node.id)
        name = resolved.removeprefix("builtins.")
        top, dot, _ = resolved.partition(".")
        if name in _DYNAMIC_CODE:
            self.flag(node, f"use of {name}")
        elif dot and top in _DENIED_MODULES and top not in self.allow:
            self.flag(node, f"use of {resolved} (as {node.id})")
        elif node.id == "__builtins__":
            self.flag(node, "use of __builtins__")
        elif node.id in _DENIED_MODULES and self.aliases.get(node.id) == node.id and node.id not in self.allow:
            self.flag(node, f"use of {node.id}")  # the module itself, e.g. passed on or indexed
        elif node.id in (_STRICT_BUILTINS if self.strict else _REACHING_BUILTINS) and node.id not in self.aliases:
            self.flag(node, f"use of {node.id}")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # The outermost definition's defaults are evaluated when it is made: at install, in the user's
        # process (its decorators are dropped and its annotations never evaluated, see Target.compile).
        if not self.depth:
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                if not _literal(default):
                    self.flag(default, "a default value that is not a literal or a name (it would be evaluated "
                                       "at install, in your process)")
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _ESCAPE_HATCHES or (self.strict and _odd_dunder(node.attr)):
            self.flag(node, f"access to {node.attr}")
        dotted = self._dotted(node)
        top = dotted.partition(".")[0] if dotted else ""
        if dotted in _FILE_OPENERS:
            self.flag(node, f"use of {dotted} (it opens files)")
        elif dotted and dotted != top and top in _DENIED_MODULES and top not in self.allow:
            self.flag(node, f"use of {dotted}")  # o.system -> "os.system": the reader sees what it is
        elif dotted and node.attr in _DENIED_MODULES and node.attr not in self.allow:
            # a module an allowed one imported, reached through it: contextlib.os, typing.sys
            self.flag(node, f"use of {dotted} (the module {node.attr}, reached through {dotted.rpartition('.')[0]})")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            func = self.aliases.get(node.func.id, node.func.id)
        else:
            func = self._dotted(node.func) or ""  # b.getattr where b is builtins
        if func in _REFLECTION or func in _VIA_BUILTINS:
            self._check_reflection(node, func.removeprefix("builtins."))
        elif func == "operator.attrgetter" and any(
                part in _ESCAPE_HATCHES for arg in node.args for part in (_constant_str(arg) or "").split(".")):
            self.flag(node, "operator.attrgetter of an interpreter attribute")
        elif self.strict and func in _REFLECTIVE_HELPERS and not all(_constant_str(a) for a in node.args):
            self.flag(node, f"{func} with a computed name")
        elif self.strict and func in _ATTRIBUTE_WRITERS:
            self.flag(node, f"use of {func} (it writes attributes of other objects)")
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for name in node.kwd_attrs:  # ``case object(tb_frame=frame)`` reads ``.tb_frame``
            if name in _ESCAPE_HATCHES or _odd_dunder(name):
                self.flag(node, f"access to {name} (in a class pattern)")
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = _constant_str(node.slice)
        if key is not None and (key in _DYNAMIC_CODE or key in _ESCAPE_HATCHES):
            self.flag(node, f"subscript with {key!r}")
        self.generic_visit(node)

    def _check_reflection(self, node: ast.Call, func: str) -> None:
        if len(node.args) < 2:
            return
        name = _constant_str(node.args[1])
        if name is None:
            if self.strict and func != "hasattr":
                self.flag(node, f"{func} with a computed attribute name")
        elif name in _ESCAPE_HATCHES or name in _DYNAMIC_CODE or (self.strict and _odd_dunder(name)):
            self.flag(node, f"{func} of {name}")
        elif name in _DENIED_MODULES and name not in self.allow:
            self.flag(node, f"{func} of {name} (a module reached through another: getattr(contextlib, 'os'))")

    def visit_Global(self, node: ast.Global) -> None:
        # A candidate that rebinds the module's state (global API_KEY) acts outside the call it is judged on.
        self.flag(node, f"global statement ({', '.join(node.names)})")

    def _dotted(self, node: ast.expr) -> str | None:
        """``o.path.join`` -> ``os.path.join`` when ``o`` is an alias of ``os``; None if not a name chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])


_DUNDER_OK = frozenset(
    {"__name__", "__qualname__", "__doc__", "__class__", "__init__", "__len__", "__iter__", "__next__", "__eq__",
     "__hash__", "__repr__", "__str__", "__post_init__", "__annotations__", "__module__"}
)  # fmt: skip


def _literal(node: ast.expr) -> bool:
    """A default that is safe to evaluate anywhere: a literal, or a plain name."""
    if isinstance(node, ast.Name):
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _odd_dunder(name: str) -> bool:
    """A dunder name outside the everyday ones (strict mode flags these)."""
    return name.startswith("__") and name.endswith("__") and name not in _DUNDER_OK


def _constant_str(node: ast.expr) -> str | None:
    """The string an expression always evaluates to, when it is built only from string constants.

    Folds concatenation (``"__glo" + "bals__"``), f-strings of constants and ``"".join([...])``
    of constants; anything else counts as computed.
    """
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _constant_str(node.left), _constant_str(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        pieces = [_constant_str(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(p for p in pieces if p is not None) if all(p is not None for p in pieces) else None
    if _is_join_call(node):
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        sep = _constant_str(node.func.value)
        items = node.args[0]
        if sep is not None and isinstance(items, (ast.List, ast.Tuple)):
            pieces = [_constant_str(item) for item in items.elts]
            if all(p is not None for p in pieces):
                return sep.join(p for p in pieces if p is not None)
    return None


def _is_join_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and not node.keywords
    )

"""Which environment variables the function being healed reads, so that its candidates run with them.

The sandbox removes every variable that looks like a credential (``DATABASE_URL``, ``AWS_*``, ``*_TOKEN``
…, :func:`regrow._redact.is_secret_variable`). A function that reads one could then never be healed: each
candidate fails with ``KeyError: 'DATABASE_URL'``, or runs under another configuration than its tests
did (``os.environ.get(name, default)``). So the session reads the source of the target's module (``ast``)
for the names it reads — ``os.environ["X"]``, ``os.environ.get("X")``, ``os.getenv("X")``,
``os.environ.setdefault("X", …)``, ``"X" in os.environ``, through ``from os import environ, getenv`` and
aliases too, and through a module-level constant holding the name — and keeps those in the sandbox child
(:attr:`regrow._sandbox.Limits.environ_keep`); every other secret is removed as before. Their values are
registered as secrets (:func:`regrow._secrets.register_secret`), so every verdict, event, log line,
prompt and ledger row masks them, plain and encoded.

A read whose name is not a constant (``os.environ[f"{service}_URL"]``, ``dict(os.environ)``) is listed as
such: regrow cannot tell which variable it needs, so the session's reason says how to name it
(``environ=[…]``) when candidates fail for want of a withheld variable (:func:`withheld_note`).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import linecache
import logging
import os
import re
import textwrap
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, TypeAlias

from .._redact import is_secret_variable
from .._secrets import register_secret

log = logging.getLogger("regrow")

Keep: TypeAlias = "bool | Sequence[str]"  # True: the variables the function reads; False: none; names: those and these

_READING = frozenset({"get", "setdefault", "pop", "__getitem__", "__contains__"})  # methods that name the variable
_WRITING = frozenset({"update", "clear", "__setitem__", "__delitem__"})  # they read nothing


@dataclasses.dataclass(frozen=True)
class Reads:
    """The variables a function's module reads by a constant name, and how it reads the others."""

    names: tuple[str, ...] = ()
    computed: tuple[str, ...] = ()  # each read through a name that is not a constant: ``expression (line N)``


def reads_of(func: Callable[..., Any]) -> Reads:
    """What the module of ``func`` (or ``func`` alone, where its module's source cannot be read) reads."""
    code = getattr(func, "__code__", None)
    filename = getattr(code, "co_filename", "")
    module = "".join(linecache.getlines(filename)) if filename else ""
    reads = _scan_text(module) if module else None
    if reads is None:
        try:
            import inspect

            reads = _scan_text(textwrap.dedent(inspect.getsource(func)))
        except (OSError, TypeError):
            reads = None
    return reads or Reads()


@functools.lru_cache(maxsize=64)
def _scan_text(source: str) -> Reads | None:
    if source.isascii() and "environ" not in source and "getenv" not in source:
        return Reads()  # no read of the environment can be written without these: no parse (~0.1 s for 3,000 lines)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return scan(tree)


def scan(tree: ast.AST) -> Reads:
    """The variables ``tree`` reads by a constant name, and its other reads of the environment."""
    aliases = _Aliases.of(tree)
    constants = _constants(tree)
    names: dict[str, None] = {}
    computed: dict[str, None] = {}
    used: set[int] = set()  # ids of the environ nodes a read below accounts for
    for node in ast.walk(tree):
        for key, environ in _keys(node, aliases):
            if environ is not None:
                used.add(id(environ))
            if key is None:  # a write, not a read
                continue
            name = _constant_name(key, constants)
            if name is not None:
                names[name] = None
            else:
                computed[f"{ast.unparse(node)} (line {getattr(node, 'lineno', '?')})"] = None
    for node in ast.walk(tree):
        if aliases.is_environ(node) and id(node) not in used:
            computed[f"{ast.unparse(node)}, the whole environment (line {getattr(node, 'lineno', '?')})"] = None
    return Reads(tuple(names), tuple(computed))


@dataclasses.dataclass
class _Aliases:
    """The names the module binds to ``os``, ``os.environ`` and ``os.getenv``."""

    os: set[str]
    environ: set[str]
    getenv: set[str]

    @classmethod
    def of(cls, tree: ast.AST) -> _Aliases:
        found = cls({"os"}, set(), set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.os |= {alias.asname or alias.name for alias in node.names if alias.name == "os"}
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                found.environ |= {alias.asname or alias.name for alias in node.names if alias.name == "environ"}
                found.getenv |= {alias.asname or alias.name for alias in node.names if alias.name == "getenv"}
        return found

    def is_environ(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.environ
        return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
                and node.value.id in self.os)

    def is_getenv(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.getenv
        return (isinstance(node, ast.Attribute) and node.attr == "getenv" and isinstance(node.value, ast.Name)
                and node.value.id in self.os)


def _keys(node: ast.AST, aliases: _Aliases) -> Iterator[tuple[ast.expr | None, ast.AST | None]]:
    """``(key expression, environ node)`` for each way ``node`` reads (key) or writes (None) one variable."""
    if isinstance(node, ast.Subscript) and aliases.is_environ(node.value):
        yield (node.slice if isinstance(node.ctx, ast.Load) else None), node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and aliases.is_environ(node.func.value):
        if node.func.attr in _READING and node.args:
            yield node.args[0], node.func.value
        elif node.func.attr in _WRITING:
            yield None, node.func.value
    elif isinstance(node, ast.Call) and aliases.is_getenv(node.func) and node.args:
        yield node.args[0], None
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
            and aliases.is_environ(node.comparators[0]):
        yield node.left, node.comparators[0]


def _constants(tree: ast.AST) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments: a variable's name is often kept in one."""
    found: dict[str, str] = {}
    for node in getattr(tree, "body", ()):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and type(node.value.value) is str:
            found |= {target.id: node.value.value for target in node.targets if isinstance(target, ast.Name)}
    return found


def _constant_name(key: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(key, ast.Constant) and type(key.value) is str:
        return key.value
    if isinstance(key, ast.Name):
        return constants.get(key.id)
    return None


# -- what the session does with them ------------------------------------------------------------


def kept(func: Callable[..., Any], environ: Keep = True) -> tuple[str, ...]:
    """The variables kept in the sandbox child for ``func``'s candidates: with ``environ=True`` those its
    module reads by a constant name; with ``False`` none; with names, those read and the names given."""
    if isinstance(environ, str):
        raise TypeError(f"environ= takes True, False or a list of names, not the string {environ!r}")
    found = reads_of(func).names if environ is not False else ()
    given = () if isinstance(environ, bool) else tuple(environ)
    return tuple(sorted({*found, *given}))


def protect(names: Collection[str]) -> None:
    """Register the value of each of ``names`` that is a secret (and would otherwise be removed): every
    text the session makes from now on masks it, whatever comes back from the child that held it."""
    for name in names:
        value = os.environ.get(name)
        if value and is_secret_variable(name, value):
            register_secret(value)


def withheld(names: Collection[str], keep: Collection[str]) -> list[str]:
    """Those of ``names`` set here that the sandbox removes from a child keeping ``keep``."""
    found = []
    for name in names:
        value = os.environ.get(name)
        if name not in keep and value is not None and is_secret_variable(name, value):
            found.append(name)
    return sorted(set(found))


_MISSING = re.compile(r"KeyError: (?:'([^'\\]+)'|\"([^\"\\]+)\")")


def missing(reason: str) -> list[str]:
    """The variable names a verdict's reason says were missing (``KeyError: 'DATABASE_URL'``)."""
    return [single or double for single, double in _MISSING.findall(reason)]


def allow(names: Sequence[str]) -> str:
    """How a user allows ``names``: the keyword every front-end and :class:`~regrow.Session` take."""
    return f"allow {'it' if len(names) == 1 else 'them'} with environ={list(names)!r}"


def withheld_note(reason: str, qualname: str, missed: Sequence[str], failing: int, judged: int, reads: Reads,
                  keep: Collection[str]) -> str:
    """A failed session's ``reason``, saying which withheld variable its candidates lacked and how to allow it.

    ``missed``: the withheld variables the verdicts named missing; ``failing``: how many candidates failed
    so, of ``judged``. Without such verdicts, a withheld variable the function reads by name (keeping
    turned off), or a read through a computed name while secrets are withheld, is still named.
    """
    if missed:
        names = sorted(set(missed))
        why = f"{', '.join(names)}, which the sandbox withheld from them (named like a secret): {allow(names)}"
        if failing >= judged:
            return f"every candidate failed without {why}"
        return f"{reason}; {failing} of {judged} candidates failed without {why}"
    static = withheld(reads.names, keep)
    if static:
        return (f"{reason}; the sandbox withheld {', '.join(static)}, which {qualname} reads (named like a "
                f"secret), from every candidate: {allow(static)}")
    if reads.computed and withheld(list(os.environ), keep):
        return (f"{reason}; {qualname} reads the environment through a name regrow cannot tell "
                f"({reads.computed[0]}) and the sandbox withholds variables named like secrets: name the ones "
                f"it needs with environ=['NAME', ...]")
    return reason

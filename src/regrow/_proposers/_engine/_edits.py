"""What an operator is and what it produces: one edit at one site of the function.

An operator looks at one :class:`Site` and yields replacements: an expression for an expression
site, a list of statements for a statement site (an empty list deletes it), an :class:`Insert`
of new statements beside a statement site, or a :class:`Branch` added to an ``if``. ``tier``
orders families (1 core mutations, 2 fix templates, 3 expression copy, 4 statement edits);
``prior`` orders operators inside a tier, lower first.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
from collections import Counter
from collections.abc import Iterator
from typing import Protocol

from ._scope import Scope, Site

TIER_NAMES = {1: "core", 2: "template", 3: "copy", 4: "statement"}


@dataclasses.dataclass(frozen=True)
class Insert:
    """New statements put before (or, with ``after``, after) a statement site, which stays."""

    stmts: list[ast.stmt]
    after: bool = False


@dataclasses.dataclass(frozen=True)
class Branch:
    """A new ``elif test:`` with ``body``, put right after the body of an ``if`` statement site."""

    test: ast.expr
    body: list[ast.stmt]


Replacement = ast.expr | list[ast.stmt] | Insert | Branch


class Operator(Protocol):
    name: str
    tier: int
    prior: int

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]: ...


def with_fields(node: ast.AST, **fields: object) -> ast.AST:
    """A shallow copy of ``node`` with some fields replaced."""
    new = copy.copy(node)
    for key, value in fields.items():
        setattr(new, key, value)
    return new


def load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(load(func), list(args), [])


def plus(expr: ast.expr, delta: int) -> ast.expr:
    """``expr + delta`` (folded into a literal where ``expr`` is an int literal)."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return ast.Constant(expr.value + delta)
    op: ast.operator = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(expr, op, ast.Constant(abs(delta)))


def names_in(node: ast.AST) -> list[str]:
    """The names ``node`` reads or writes, in order of first appearance."""
    return list(dict.fromkeys(n.id for n in ast.walk(node) if isinstance(n, ast.Name)))


def rename(node: ast.AST, old: str, new: str) -> ast.AST:
    """``node`` with every occurrence of the name ``old`` renamed to ``new``: copied along the way to each
    renamed name, every other part shared with ``node`` (so that it keeps its text when spliced)."""
    if isinstance(node, ast.Name) and node.id == old:
        return with_fields(node, id=new)
    if not any(isinstance(n, ast.Name) and n.id == old for n in ast.walk(node)):
        return node
    twin = copy.copy(node)
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            setattr(twin, field, [rename(v, old, new) if isinstance(v, ast.AST) else v for v in value])
        elif isinstance(value, ast.AST):
            setattr(twin, field, rename(value, old, new))
    return twin


def in_condition(site: Site) -> bool:
    """Whether the site is a condition: an ``if``/``while``/``assert`` test, a filter, a ternary's test."""
    parent = site.parent
    if site.field == "test" and isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return True
    return site.field == "ifs" and isinstance(parent, ast.comprehension)


def is_value(site: Site) -> bool:
    """Whether the site holds a computed value worth arithmetic: a returned, assigned or compared one."""
    if not isinstance(site.node, ast.expr) or isinstance(getattr(site.node, "ctx", None), (ast.Store, ast.Del)):
        return False
    if isinstance(site.node, (ast.Compare, ast.BoolOp, ast.JoinedStr, ast.Lambda)):
        return False
    parent, field = site.parent, site.field
    return (
        (isinstance(parent, (ast.Return, ast.Assign, ast.AugAssign)) and field == "value")
        or isinstance(parent, ast.Compare)
        or (isinstance(parent, ast.Subscript) and field == "slice" and not isinstance(site.node, ast.Slice))
    )


def is_passed_count(site: Site) -> bool:
    """A position or a count passed on: an argument of a call of the user's own function, positional or by
    keyword (``position=pos``, ``_encode_range(first, last)``), or the mask of a bitwise ``&`` (``r & ((1 <<
    32) - 1)``). Builtins take their counts where ``range``, slices and subscripts do, offered already."""
    node, parent = site.node, site.parent
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp)):
        return False
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitAnd):
        return True
    if isinstance(parent, ast.keyword):
        return parent.arg is not None
    return (isinstance(parent, ast.Call) and site.field == "args" and isinstance(parent.func, ast.Name)
            and parent.func.id not in _BUILTINS)


_BUILTINS = frozenset(dir(builtins))


_LABELLED = ("id", "attr", "arg", "value", "name")  # the first of these a node holds a plain value in labels it
_LABEL_FIELDS: dict[type, tuple[str, ...]] = {}


def _label(node: ast.AST) -> str:
    kind = type(node)
    fields = _LABEL_FIELDS.get(kind)
    if fields is None:
        fields = _LABEL_FIELDS[kind] = tuple(field for field in _LABELLED if field in kind._fields)
    for field in fields:
        value = getattr(node, field, None)
        if isinstance(value, (str, int, float, bool, bytes)) or (field == "value" and value is None
                                                                  and kind is ast.Constant):
            return f"{kind.__name__}:{value!r}"
    return kind.__name__


_JUMPS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Nodes that are no token of their own: a sign is counted by its operator (``-x`` is one token more than ``x``).
_STRUCTURE = (ast.expr_context, ast.Pass, ast.UnaryOp)


def _labels(nodes: list[ast.AST]) -> Counter[str]:
    """The labels of the nodes under ``nodes``, counted (a walk of their fields: the host sizes every edit
    it passes over, and ``ast.walk`` took twice as long)."""
    counts: Counter[str] = Counter()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if not isinstance(node, _STRUCTURE):
            label = _label(node)
            counts[label] = counts.get(label, 0) + 1
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend([item for item in value if isinstance(item, ast.AST)])
    return counts


class EditSizes:
    """How many AST nodes an edit changes: the larger of the nodes added and the nodes removed.

    The labels of each replaced node are counted once, however many edits replace it. A jump put
    before statements (``return x`` above a guard) removes them as surely as deleting them would,
    and counts them too: such an edit disables code rather than changing it.
    """

    def __init__(self) -> None:
        self._before: dict[int, Counter[str]] = {}

    def __call__(self, site: Site, new: Replacement) -> int:
        if isinstance(new, Insert):
            return sum(_labels(list(new.stmts)).values()) + self._disabled(site, new)
        if isinstance(new, Branch):
            return 1 + sum(_labels([new.test, *new.body]).values())
        before = self._before.get(site.order)
        if before is None:
            before = self._before[site.order] = _labels([site.node])
        after = _labels(list(new) if isinstance(new, list) else [new])
        return max(sum((after - before).values()), sum((before - after).values()), 1)

    def _disabled(self, site: Site, new: Insert) -> int:
        block = getattr(site.parent, site.field, None)
        if new.after or not new.stmts or not isinstance(new.stmts[-1], _JUMPS) or not isinstance(block, list):
            return 0
        return sum(_labels(block[site.index:]).values())

"""Tier 2, block templates: the small pieces of code a fix adds — a ``return`` that went missing, a
guard block, an ``elif`` built from its neighbour, a lost update, a wrapper call.

Each operator draws only on what the function already holds (its variables, literals and exception
names), at the places such code goes (the end of a branch, before the first use of a value), so
that the count of edits stays a small multiple of the function's size.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence

from ._edits import Branch, Insert, Operator, Replacement, call, load
from ._scope import Scope, Site
from ._statements import _ENDS, _in_block, _is_last, _placed

_MAX_RETURNED = 4  # variables tried in a restored return
_GUARD_LITERALS: tuple[int | str | bool, ...] = (0, "", False)
_MUTATORS = frozenset({"append", "extend", "add", "update", "insert", "remove", "discard", "clear", "sort",
                       "reverse", "write", "appendleft", "extendleft", "setdefault", "send", "close"})
_SIDE_EFFECTS = frozenset({"print", "setattr", "delattr", "exec", "next"})
_WRAPPERS = {"iter": ("reversed", "sorted", "list"), "value": ("sorted", "list")}
# Conversions a stored or returned value may have lost; offered where the function names them elsewhere
# (``isinstance(src, bytes)`` ... ``return chk`` for ``return bytes(chk)``).
_CONVERSIONS = frozenset({"bytes", "str", "int", "float", "bool", "tuple", "set", "frozenset", "dict", "abs"})


def _is_docstring(site: Site) -> bool:
    node = site.node
    return site.index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _stored(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements assign (at any depth), in order."""
    return list(dict.fromkeys(n.id for stmt in stmts for n in ast.walk(stmt)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)))


def _read(nodes: Sequence[ast.AST]) -> list[str]:
    return list(dict.fromkeys(n.id for node in nodes for n in ast.walk(node)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)))


class ReturnDropped:
    """A ``return`` that went missing: a bare expression returned (``round(x)`` → ``return round(x)``), a
    bare ``return`` given a value, or ``return v`` after the last statement of a branch that falls through,
    for a variable ``v`` the branch computed."""

    name, tier, prior = "return-dropped", 2, 0

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if scope.is_generator or not _in_block(site) or _is_docstring(site):
            return
        if isinstance(node, ast.Expr) and _returnable(node.value):
            yield [ast.Return(node.value)]
        elif isinstance(node, ast.Return) and node.value is None:
            for name in scope.assigned[:_MAX_RETURNED]:
                yield [ast.Return(load(name))]
        if _falls_through(site):
            block = getattr(site.parent, site.field)
            for name in _computed(block, scope)[:_MAX_RETURNED]:
                yield Insert([ast.Return(load(name))], after=True)


def _returnable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Constant, ast.Yield, ast.YieldFrom, ast.Await)):
        return False
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name not in _MUTATORS and name not in _SIDE_EFFECTS
    return True


def _falls_through(site: Site) -> bool:
    """Whether the site ends a branch that runs on (not a loop body, not ``finally``) and is no jump."""
    if not _is_last(site) or isinstance(site.node, _ENDS):
        return False
    parent = site.parent
    loop = isinstance(parent, (ast.For, ast.AsyncFor, ast.While))
    return (site.field in ("body", "orelse") and not loop) or isinstance(parent, ast.ExceptHandler)


def _computed(block: list[ast.stmt], scope: Scope) -> list[str]:
    """Variables worth returning at the end of ``block``: those it assigns, the last first, then the others."""
    own = _stored(block)[::-1]
    return [*own, *(name for name in scope.assigned if name not in own)]


class GuardBlock:
    """A guard before the first statement of a block that uses a parameter or loop variable ``x``:
    ``if x is None:`` with ``return None``, ``return <literal>``, ``raise <error>`` or ``continue``;
    ``if not x:`` with ``return x``, ``return None`` or ``raise <error>``."""

    name, tier, prior = "guard-block", 2, 1

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.stmt) or not _in_block(site) or _is_docstring(site) or \
                isinstance(node, (ast.Break, ast.Continue, ast.Pass, ast.Global, ast.Nonlocal)):
            return
        inputs = [*scope.params, *scope.loop_targets]
        block = getattr(site.parent, site.field)
        earlier = _read([_header(stmt) for stmt in block[: site.index]])
        for x in [n for n in _fragile(_header(node)) if n in inputs and n not in earlier][:2]:
            for test, empty in ((ast.Compare(load(x), [ast.Is()], [ast.Constant(None)]), False),
                                (ast.UnaryOp(ast.Not(), load(x)), True)):
                for body in _guard_bodies(x, empty, site, scope):
                    yield Insert([ast.If(test, [body], [])])


def _fragile(node: ast.AST) -> list[str]:
    """The names ``node`` reads, those that fail on an empty or missing value first: a divisor, the
    base of a subscript or an attribute, what is measured."""
    first = []
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            first.append(n.right)
        elif isinstance(n, (ast.Subscript, ast.Attribute)):
            first.append(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
            first += n.args
    names = _read(first)
    return [*names, *(n for n in _read([node]) if n not in names)]


def _header(stmt: ast.stmt) -> ast.AST:
    """The part of a statement that runs first: a loop's iterable, a condition, else the statement."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return stmt.iter
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    if isinstance(stmt, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ast.Pass()
    return stmt


def _guard_bodies(x: str, empty: bool, site: Site, scope: Scope) -> Iterator[ast.stmt]:
    """What a guard does. Where ``x is None`` and ``not x`` would both pass, the narrower ``is None`` is the
    fix a reviewer means, so the bodies a missing value calls for are offered with ``is None`` alone."""
    if empty:
        yield ast.Return(load(x))
    yield ast.Return(ast.Constant(None)) if scope.returns_values else ast.Return()
    if not empty:
        returned = [n.value.value for n in ast.walk(scope.function) if isinstance(n, ast.Return)
                    and isinstance(n.value, ast.Constant) and isinstance(n.value.value, (int, float, str))]
        for literal in list(dict.fromkeys([*returned, *_GUARD_LITERALS]))[:3]:
            yield ast.Return(ast.Constant(literal))
    for error in _errors(scope)[:2]:
        yield ast.Raise(load(error))
    if not empty and id(site.node) in scope.in_loop:
        yield ast.Continue()


def _errors(scope: Scope) -> list[str]:
    """Exception names the function raises or catches, else ``ValueError``."""
    named = []
    for node in ast.walk(scope.function):
        exc = node.exc if isinstance(node, ast.Raise) else node.type if isinstance(node, ast.ExceptHandler) else None
        if isinstance(exc, ast.Call):
            exc = exc.func
        if isinstance(exc, ast.Name):
            named.append(exc.id)
    return list(dict.fromkeys(named)) or ["ValueError"]


class ElifBranch:
    """A new ``elif`` after an ``if`` branch, its test the branch's with one literal swapped for another of
    the function or the module (``day == "sat"`` → ``elif day == "sun"``), its body the branch's."""

    name, tier, prior = "elif", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.If):
            return
        for literal in [n for n in ast.walk(node.test) if isinstance(n, ast.Constant)][:2]:
            value = literal.value
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                continue
            same = [v for v in [*scope.constants, *scope.module.literals] if type(v) is type(value) and v != value]
            for other in list(dict.fromkeys(same))[:8]:
                yield Branch(_replaced(node.test, literal, ast.Constant(other)), node.body)


def _replaced(root: ast.expr, old: ast.AST, new: ast.expr) -> ast.expr:
    """``root`` with the node ``old`` replaced by ``new``, copied only along the path to it."""
    if root is old:
        return new
    twin = None
    for field, value in ast.iter_fields(root):
        if isinstance(value, list) and any(_contains(v, old) for v in value):
            twin = twin or copy.copy(root)
            setattr(twin, field, [_replaced(v, old, new) if isinstance(v, ast.expr) else v for v in value])
        elif isinstance(value, ast.expr) and _contains(value, old):
            twin = twin or copy.copy(root)
            setattr(twin, field, _replaced(value, old, new))
    return twin or root


def _contains(node: ast.AST, part: ast.AST) -> bool:
    return any(n is part for n in ast.walk(node))


class RestoreUpdate:
    """A lost update inside a loop: ``n += 1`` for a counter, or ``x = y`` at the end of a loop body that
    computes ``y`` for the variable ``x`` it reads (``rows = new_rows``)."""

    name, tier, prior = "restore", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not _in_block(site) or _is_docstring(site) or id(node) not in scope.in_loop:
            return
        block = getattr(site.parent, site.field)
        for counter in _counters(scope):
            if counter not in _stored(block):
                yield from _placed(site, ast.AugAssign(ast.Name(counter, ast.Store()), ast.Add(), ast.Constant(1)))
        if _is_last(site):
            made = _stored(block)
            carried = [n for n in _read(block) if n not in made and n in scope.variables]
            for y in made[::-1][:3]:
                for x in carried[:3]:
                    yield Insert([ast.Assign([ast.Name(x, ast.Store())], load(y))], after=True)


class ExitAdded:
    """A loop exit that went missing: ``break`` (or ``continue``) after the last statement of an ``if``
    branch inside a loop (``if i != skip: yield i`` for ``yield i; break``): the branch that found what
    the loop looked for goes on looping instead."""

    name, tier, prior = "exit-added", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        if _in_block(site) and _is_last(site) and isinstance(site.parent, ast.If) and id(site.node) in scope.in_loop:
            yield Insert([ast.Break()], after=True)
            yield Insert([ast.Continue()], after=True)


def _counters(scope: Scope) -> list[str]:
    """Variables counted in steps: set to a whole number or stepped by one somewhere."""
    found = []
    for node in ast.walk(scope.function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and type(node.value.value) is int:
            found += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.append(node.target.id)
    return list(dict.fromkeys(found))[:3]


class WrapCall:
    """``x`` → ``reversed(x)``, ``sorted(x)``, ``list(x)`` where a sequence is iterated, stored or returned;
    a stored or returned value converted by a builtin the function names elsewhere (``bytes(x)``);
    ``range(x)`` → ``range(len(x))``."""

    name, tier, prior = "wrap", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node, parent = site.node, site.parent
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or site.field == "func" or \
                isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            return
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "range" and \
                site.field == "args" and isinstance(node, (ast.Name, ast.Attribute)):
            yield call("len", node)
            return
        if site.field == "iter" and isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
            kind = "iter"
        elif site.field == "value" and isinstance(parent, (ast.Assign, ast.Return)):
            kind = "value"
        else:
            return
        called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
        named = [name for name in scope.loaded if name in _CONVERSIONS] if kind == "value" else []
        for wrapper in dict.fromkeys([*_WRAPPERS[kind], *named]):
            if wrapper != called:
                yield call(wrapper, node)


class SwapStatements:
    """Two neighbouring statements of a block in the wrong order, one writing what the other reads:
    ``out.append(total)`` before ``total += x`` in a running sum. The block's statement is replaced with
    the two swapped (the rest kept as written)."""

    name, tier, prior = "swap-stmts", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith)):
            return
        for field in ("body", "orelse"):
            block: list[ast.stmt] = getattr(node, field, None) or []
            for i in range(len(block) - 1):
                first, second = block[i], block[i + 1]
                if _dependent(first, second):
                    swapped = copy.copy(node)
                    setattr(swapped, field, [*block[:i], second, first, *block[i + 2 :]])
                    yield [swapped]


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _dependent(first: ast.stmt, second: ast.stmt) -> bool:
    """Whether two simple statements depend on each other: one writes (or mutates) a name the other reads."""
    if not isinstance(first, _SIMPLE) or not isinstance(second, _SIMPLE):
        return False
    return bool(_writes(first) & set(_read([second])) or _writes(second) & set(_read([first])))


def _writes(stmt: ast.stmt) -> set[str]:
    written = set(_stored([stmt]))
    written.update(n.func.value.id for n in ast.walk(stmt) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS
                   and isinstance(n.func.value, ast.Name))
    return written


BLOCKS: list[Operator] = [ReturnDropped(), GuardBlock(), ElifBranch(), RestoreUpdate(), ExitAdded(), WrapCall(),
                          SwapStatements()]

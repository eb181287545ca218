"""What a mutation may draw on: the names, constants and structure of the function being mutated,
and what its module offers beside it (:class:`Module`)."""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Iterator
from typing import TypeVar

from ._module import Deferring, Module, defer, own_nodes, statement_keys

_Node = TypeVar("_Node", bound=ast.AST)


@dataclasses.dataclass
class Site:
    """One node of the function and where it hangs: ``parent.field[index]`` (index -1: not a list)."""

    node: ast.AST
    parent: ast.AST
    field: str
    index: int
    order: int  # position in a walk of the function, for deterministic ordering

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 0)


@dataclasses.dataclass
class Scope(Deferring):
    """Facts about the function that operators use to build replacements."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    params: list[str]
    variables: list[str]  # parameters and locals, in order of first appearance
    loaded: list[str]  # every name read, globals and builtins included
    attributes: list[str]
    sites: list[Site]
    expressions: list[ast.expr] = dataclasses.field(default_factory=list)  # distinct small reads, to copy
    statements: list[ast.stmt] = dataclasses.field(default_factory=list)  # distinct simple statements, to copy
    methods: list[str] = dataclasses.field(default_factory=list)  # names of methods called with one argument
    module: Module = dataclasses.field(default_factory=Module)  # the function's module, where known

    @classmethod
    def of(cls, function: ast.FunctionDef | ast.AsyncFunctionDef, module: Module | None = None) -> Scope:
        args = function.args
        params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        variables = list(params)
        loaded: list[str] = []
        attributes: list[str] = []
        for node in ast.walk(function):
            if isinstance(node, ast.Name):
                bucket = variables if isinstance(node.ctx, ast.Store) else loaded
                if node.id not in bucket:
                    bucket.append(node.id)
            elif isinstance(node, ast.arg) and node.arg not in variables:
                variables.append(node.arg)
            elif isinstance(node, ast.Attribute) and node.attr not in attributes:
                attributes.append(node.attr)
        if "_" not in loaded and "_" in variables:  # ``_`` names a value thrown away: no edit reads it
            variables.remove("_")
        sites = list(_sites(function))
        methods = list(dict.fromkeys(
            n.func.attr for n in ast.walk(function)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and len(n.args) == 1
        ))
        made = cls(function, params, variables, loaded, attributes, sites, methods=methods, module=module or Module())
        # What may be copied elsewhere is asked for only by the later tiers: worked out then (see defer).
        defer(made, ("expressions",), lambda: {"expressions": _distinct(
            [s.node for s in sites if isinstance(s.node, ast.expr) and _copyable_expr(s.node)
             and _donor(s, variables)])})
        defer(made, ("statements",), lambda: {"statements": _distinct(
            [s.node for s in sites if isinstance(s.node, _SIMPLE) and not _is_docstring(s)])})
        return made

    @functools.cached_property
    def constants(self) -> list[int | float | str]:
        """The function's own literals (docstring and f-string parts left out), in order, each once."""
        found: dict[tuple[type, int | float | str], int | float | str] = {}
        for site in self.sites:
            value = site.node.value if isinstance(site.node, ast.Constant) and _plain_literal(site) else None
            if isinstance(value, (int, float, str)):
                found.setdefault((type(value), value), value)
        return list(found.values())

    @functools.cached_property
    def assigned(self) -> list[str]:
        """Variables the body assigns (parameters only where the body assigns them too), in order."""
        return list(dict.fromkeys(n.id for n in ast.walk(self.function)
                                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)))

    @functools.cached_property
    def unread(self) -> list[str]:
        """Parameters and variables the body never reads (``self``, ``cls`` and ``_``-names left out)."""
        read = {n.id for n in ast.walk(self.function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return [name for name in self.variables if name not in read and name not in ("self", "cls")
                and not name.startswith("_")]

    @functools.cached_property
    def statement_dumps(self) -> frozenset[str]:
        """Every simple statement of the body (nested functions and classes left out), as
        :attr:`Module.statements` keys them: what a twin shares."""
        return statement_keys(own_nodes(self.function))

    @functools.cached_property
    def in_loop(self) -> set[int]:
        """``id`` of every statement inside the body of a ``for`` or ``while`` loop (at any depth)."""
        inside: set[int] = set()
        for node in ast.walk(self.function):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                inside.update(id(n) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.stmt))
        return inside

    @functools.cached_property
    def loop_targets(self) -> list[str]:
        """Variables a ``for`` loop of the body binds."""
        return list(dict.fromkeys(n.id for loop in ast.walk(self.function) if isinstance(loop, (ast.For, ast.AsyncFor))
                                  for n in ast.walk(loop.target) if isinstance(n, ast.Name)))

    @functools.cached_property
    def returns_values(self) -> bool:
        return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(self.function))

    @functools.cached_property
    def is_generator(self) -> bool:
        return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(self.function))

    @functools.cached_property
    def sequences(self) -> list[str]:
        """Variables the function uses as sequences: measured, indexed, iterated or searched."""
        used: list[str] = []
        for node in ast.walk(self.function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _TAKES_SEQUENCE:
                used += [_name_of(arg) for arg in node.args]
            elif isinstance(node, ast.Compare):
                used += [_name_of(c) for op, c in zip(node.ops, node.comparators, strict=True)
                         if isinstance(op, (ast.In, ast.NotIn))]
            elif isinstance(node, ast.Subscript):
                used.append(_name_of(node.value))
            elif isinstance(node, (ast.For, ast.comprehension)):
                used.append(_name_of(node.iter))
        return [name for name in dict.fromkeys(used) if name in self.variables]


_TAKES_SEQUENCE = frozenset({"len", "enumerate", "zip", "reversed", "sorted", "list", "tuple", "set", "sum", "min",
                             "max", "any", "all", "iter"})


def _name_of(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _plain_literal(site: Site) -> bool:
    """A number or string written as such: not a docstring, an f-string part or a boolean."""
    value = getattr(site.node, "value", None)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or isinstance(site.parent, ast.JoinedStr):
        return False
    return not (isinstance(site.parent, ast.Expr) and isinstance(value, str))


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Raise, ast.Break, ast.Continue)
_MAX_COPY_NODES = 8  # larger expressions make poor donors and slow the search


def _copyable_expr(node: ast.expr) -> bool:
    if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
        return False
    if isinstance(node, (ast.Constant, ast.Starred, ast.Slice, ast.JoinedStr, ast.FormattedValue)):
        return False
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context)) <= _MAX_COPY_NODES


def _donor(site: Site, variables: list[str]) -> bool:
    """Whether an expression may be copied elsewhere: not a callee, and a bare name only where it holds a
    value (a variable or a constant) — a class or a function put in a comparison disables the branch."""
    if site.field in ("func", "exc", "cause") or (isinstance(site.node, ast.Call) and _is_class(site.node.func)):
        return False
    return not isinstance(site.node, ast.Name) or site.node.id in variables or site.node.id.isupper()


def _is_class(node: ast.AST) -> bool:
    """A name that reads as a class (``ValueError``, ``Path``): calling it builds an object, no value to copy."""
    return isinstance(node, ast.Name) and node.id[:1].isupper() and not node.id.isupper()


def _is_docstring(site: Site) -> bool:
    node = site.node
    return (site.index == 0 and site.field == "body" and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))


def _distinct(nodes: list[_Node]) -> list[_Node]:
    seen: dict[str, _Node] = {}
    for node in nodes:
        seen.setdefault(ast.dump(node), node)
    return list(seen.values())


def _sites(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Site]:
    """Every expression and statement in the body (not decorators, annotations or defaults)."""
    order = 0
    stack: list[ast.AST] = list(reversed(function.body))
    parents: dict[int, tuple[ast.AST, str, int]] = {}
    for i, stmt in enumerate(function.body):
        parents[id(stmt)] = (function, "body", i)
    while stack:
        node = stack.pop()
        parent, field, index = parents[id(node)]
        yield Site(node, parent, field, index, order)
        order += 1
        children: list[ast.AST] = []
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "type_comment", "decorator_list"):
                continue
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword,
                                          ast.comprehension, ast.withitem)):
                        parents[id(child)] = (node, name, i)
                        children.append(child)
            elif isinstance(value, (ast.expr, ast.stmt, ast.excepthandler, ast.keyword, ast.comprehension)):
                parents[id(value)] = (node, name, -1)
                children.append(value)
        stack.extend(reversed(children))

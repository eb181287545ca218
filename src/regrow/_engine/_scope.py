"""What a mutation may draw on: the names, constants and structure of the function being mutated."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from typing import TypeVar

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
class Scope:
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

    @classmethod
    def of(cls, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Scope:
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
        sites = list(_sites(function))
        expressions = _distinct([s.node for s in sites if isinstance(s.node, ast.expr) and _copyable_expr(s.node)])
        statements: list[ast.stmt] = _distinct(
            [s.node for s in sites if isinstance(s.node, _SIMPLE) and not _is_docstring(s)])
        methods = list(dict.fromkeys(
            n.func.attr for n in ast.walk(function)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and len(n.args) == 1
        ))
        return cls(function, params, variables, loaded, attributes, sites, expressions, statements, methods)


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return, ast.Raise, ast.Break, ast.Continue)
_MAX_COPY_NODES = 8  # larger expressions make poor donors and slow the search


def _copyable_expr(node: ast.expr) -> bool:
    if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
        return False
    if isinstance(node, (ast.Constant, ast.Starred, ast.Slice, ast.JoinedStr, ast.FormattedValue)):
        return False
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context)) <= _MAX_COPY_NODES


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

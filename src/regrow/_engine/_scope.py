"""What a mutation may draw on: the names, constants and structure of the function being mutated."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator


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
        return cls(function, params, variables, loaded, attributes, list(_sites(function)))


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

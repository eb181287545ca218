"""Tier 1 and 2, call and member edits: the argument a call lost, the member a method meant.

A call that lost an argument is usually written in full somewhere else in the same module
(``E.iteritems()`` where the module says ``iteritems(multi=True)`` five times), or calls a function of
the module with fewer arguments than it takes (``lstrip_iter(iterable)`` for ``lstrip_iter(iterable,
strip_value)``). A method that reads the wrong member names another member of its own class
(``self._thresh_count`` for ``self._threshold``); a call of the wrong helper names another attribute of
the same object (``bisect.bisect_right`` for ``bisect_left``, ``cls.from_bin`` for ``cls.from_hex``).
"""

from __future__ import annotations

import ast
import types
from collections.abc import Iterator

from ._edits import Operator, Replacement, is_value, load, with_fields
from ._scope import Scope, Site

_MAX_MEMBERS = 12  # other members tried at one ``self.name``
_MAX_ALIKE = 4  # attributes of a named module or class tried at one ``mod.name``
_MAX_ARGS = 4  # variables tried as a lost positional argument
_MAX_METHODS = 6  # methods tried as a lost call of a value
_MAX_ATTRIBUTES = 8  # attributes tried as a lost attribute of a value
# Methods whose one optional argument is a position: ``pop()`` takes the last item, ``pop(0)`` the first.
_POSITIONAL = frozenset({"pop"})


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


class KeywordFromModule:
    """A keyword argument added to a call, copied from a call of the same name elsewhere in the module."""

    name, tier, prior = "keyword", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call):
            return
        passed = {kw.arg for kw in node.keywords}
        if None in passed:  # ``**kw`` may hold it already
            return
        for kw in scope.module.keywords.get(_callee(node), []):
            if kw.arg not in passed:
                yield with_fields(node, keywords=[*node.keywords, ast.keyword(kw.arg, kw.value)])  # type: ignore[misc]


class PositionAdded:
    """A position a call lost, which is an off-by-one: the start ``1`` given to ``enumerate(x)`` (positions
    counted from one), or the position ``0`` to ``pop()`` (the first item, not the last). One token each,
    at a handful of sites: a core edit."""

    name, tier, prior = "position", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr in _POSITIONAL and not node.args:
            yield with_fields(node, args=[ast.Constant(0)])  # type: ignore[misc]
        elif isinstance(node.func, ast.Name) and node.func.id == "enumerate" and len(node.args) == 1:
            yield with_fields(node, args=[*node.args, ast.Constant(1)])  # type: ignore[misc]


class SentinelPassed:
    """A marker passed again: a module-level ``_MARK = object()`` that the module tests for (``a[0] is _MARK``)
    but passes nowhere, put first or last among a call's positional arguments (``cls(*a)`` for ``cls(_MARK,
    *a)``: the alternate constructor that lost the marker its class looks for). A marker nobody passes is
    the sign of such a loss, as a parameter nobody reads is (:class:`LostUse`)."""

    name, tier, prior = "sentinel", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            return
        for marker in scope.module.sentinels:
            if marker not in scope.loaded:
                yield with_fields(node, args=[load(marker), *node.args])  # type: ignore[misc]
                if node.args:
                    yield with_fields(node, args=[*node.args, load(marker)])  # type: ignore[misc]


class ArgumentAdded:
    """A positional argument a call lost: a variable of the function appended to a call of a module
    function that takes more than it is given (parameters of the function first)."""

    name, tier, prior = "argument", 2, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return
        if not isinstance(node.func, ast.Name) or len(node.args) >= scope.module.arity.get(node.func.id, 0):
            return
        given = {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
        given |= {n.id for kw in node.keywords for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
        ordered = [*scope.params, *(v for v in scope.variables if v not in scope.params)]
        for var in [v for v in ordered if v not in given and v not in ("self", "cls")][:_MAX_ARGS]:
            yield with_fields(node, args=[*node.args, load(var)])  # type: ignore[misc]


class MemberSwap:
    """``self.a`` → ``self.b`` for another member of the method's own class (its data for data, its methods
    for a callee, names alike first in each); ``m.a`` →
    ``m.b`` for an attribute of a module or class ``m`` of the globals whose name is alike ``a``."""

    name, tier, prior = "member", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load) or \
                not isinstance(node.value, ast.Name):
            return
        base = node.value.id
        if scope.params[:1] == [base] and base in ("self", "cls"):
            data, methods = scope.module.members, scope.module.methods
            first, then = (methods, data) if site.field == "func" else (data, methods)
            pool = [*_alike(node.attr, first), *_alike(node.attr, then)][:_MAX_MEMBERS]
        elif base in scope.variables:
            return
        else:
            pool = [name for name in _alike(node.attr, _attributes_of(scope, base), strict=True)][:_MAX_ALIKE]
        for other in pool:
            if other != node.attr and other not in scope.attributes:  # those are AttributeSwap's
                yield with_fields(node, attr=other)  # type: ignore[misc]


def _attributes_of(scope: Scope, base: str) -> list[str]:
    """The public attributes of the module or class ``base`` names in the function's globals, if it does."""
    value = scope.module.namespace.get(base)
    if not isinstance(value, (types.ModuleType, type)):
        return []
    try:
        return [name for name in dir(value) if not name.startswith("__")]
    except Exception:  # a module's __dir__ may raise anything
        return []


def _alike(name: str, names: list[str], strict: bool = False) -> list[str]:
    """``names`` ordered by how alike ``name`` they are (the longest common prefix plus suffix), stably;
    with ``strict`` only those that share a prefix or a suffix of three characters or more."""
    def common(a: str, b: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    scored = [(-(common(name, other) + common(name[::-1], other[::-1])), i, other) for i, other in enumerate(names)
              if other != name and (not strict or max(common(name, other), common(name[::-1], other[::-1])) >= 3)]
    return [other for _, _, other in sorted(scored)]


class MethodAdded:
    """A call a value lost: ``x`` → ``x.m()`` for a method ``m`` called without arguments in the function
    or, most often first, in its module (``return string`` for ``return string.lower()``, ``word in WORDS``
    for ``word.lower() in WORDS``, ``b = b`` for ``b = b.lower()``)."""

    name, tier, prior = "method-added", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id not in scope.variables \
                or node.id in ("self", "cls") or not (is_value(site) or isinstance(site.parent, ast.Compare)):
            return
        own = [n.func.attr for n in ast.walk(scope.function) if isinstance(n, ast.Call) and not n.args
               and not n.keywords and isinstance(n.func, ast.Attribute)]
        for method in list(dict.fromkeys([*own, *scope.module.bare_calls]))[:_MAX_METHODS]:
            yield ast.Call(ast.Attribute(node, method, ast.Load()), [], [])


class AttributeAdded:
    """``x`` → ``x.a`` for an attribute ``a`` the function reads elsewhere, where a value is stored,
    returned or compared (``prev = next`` for ``prev = next.prev``)."""

    name, tier, prior = "attribute-added", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scope.variables and \
                node.id not in ("self", "cls") and is_value(site):
            for attr in scope.attributes[:_MAX_ATTRIBUTES]:
                yield ast.Attribute(node, attr, ast.Load())


class LookupStyle:
    """``d.get(k)`` ↔ ``d[k]``: a lookup that should raise on a missing key written as one that returns
    ``None``, or (in a function that looks up with ``.get`` elsewhere, so works on mappings) the other
    way round."""

    name, tier, prior = "lookup", 1, 5

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and \
                len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            yield ast.Subscript(node.func.value, node.args[0], ast.Load())
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and "get" in scope.attributes and \
                isinstance(node.value, (ast.Name, ast.Attribute)) and \
                not isinstance(node.slice, (ast.Slice, ast.Tuple)):
            yield ast.Call(ast.Attribute(node.value, "get", ast.Load()), [node.slice], [])


class MethodLookup:
    """``self[k]`` → ``self.m(k)`` for a method ``m`` of the class that takes one argument: a class
    with a lookup of its own meant it (``self.getlist(k)``: every value of a key, not the last)."""

    name, tier, prior = "lookup-method", 2, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and node.value.id == "self" and scope.params[:1] == ["self"] \
                and not isinstance(node.slice, (ast.Slice, ast.Tuple, ast.Starred)):
            for method in scope.module.unary[:_MAX_METHODS]:
                yield ast.Call(ast.Attribute(load("self"), method, ast.Load()), [node.slice], [])


class OwnMember:
    """A value of the module → the instance's own of the same name: ``random.choice`` → ``self.__choice``
    where the class keeps one (set from an argument, so that a caller can replace the default)."""

    name, tier, prior = "own-member", 2, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if scope.params[:1] != ["self"] or not isinstance(getattr(node, "ctx", None), ast.Load):
            return
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id != "self":
            name = node.attr if node.value.id not in scope.variables else ""
        else:
            name = node.id if isinstance(node, ast.Name) and node.id not in scope.variables else ""
        for member in [*scope.module.members, *scope.module.methods] if name else []:
            if member != name and member.lstrip("_") == name.lstrip("_"):
                yield ast.Attribute(load("self"), member, ast.Load())


CALLS: list[Operator] = [KeywordFromModule(), PositionAdded(), SentinelPassed(), ArgumentAdded(), MemberSwap(),
                         MethodAdded(), AttributeAdded(), LookupStyle(), MethodLookup(), OwnMember()]

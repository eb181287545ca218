"""Whether a write lands in an object the call made (or was given), for the capability check: an allowlist.

Five red teams found ways to reach a global through a local the check did not trace (a nested function's
parameter, a ``match`` capture, ``None or price``, ``{"k": price}["k"]``, ``sorted([price])[0]``, a list
filled after it was made, an exception's ``args``, a generator's ``send``, a local class's attribute) and then
write to it: a counter kept across calls. So a write — an attribute or item store, a mutating method, ``setattr``,
a decorator that writes into what it is given — is allowed only where the object written is **fresh**: made by
this call (a literal, a comprehension, a copy, a constructor, arithmetic) or the caller's (a parameter without a
default, a part of one); and a write into a part of an object only where that object is **deep**: it and
everything in it fresh. Anything else is refused, whether or not a route to a global is seen.

What each local is bound to comes from :func:`._capability_shapes.local_values`, where a name bound to a part of a
value (a loop's target, an unpacked element, a capture, a ``with`` name) is bound to ``value[0]`` (a part), and a
local class to a tuple of what its body assigns (a container made now, holding those).
"""

from __future__ import annotations

import ast
from typing import Any

from ._scopes import MISSING
from ._vocabulary import immutable, pure_chain

UNKNOWN = "<unknown>"  # bound to a parameter of a function passed as a value, and to an ``except`` name: anything
_MADE = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
         ast.GeneratorExp, ast.Lambda, ast.UnaryOp, ast.Compare, ast.BinOp)  # each evaluation makes a new object
_CONTAINERS = frozenset({"list", "dict", "set", "frozenset", "tuple", "sorted", "bytearray", "reversed", "sum"})
_IMMUTABLE = frozenset({"str", "int", "float", "bool", "bytes", "complex", "len", "abs", "round", "repr", "ascii",
                        "format", "any", "all", "isinstance", "issubclass", "callable", "ord", "chr", "hex", "oct",
                        "bin", "divmod", "pow", "hash", "id"})  # builtins whose result holds no object of theirs


def fresh(self: Any, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether the object ``node`` evaluates to was made by this call or given by its caller."""
    if isinstance(node, ast.Name):
        return _name(self, node.id, seen, fresh)
    if isinstance(node, _MADE):
        return True
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) or deep(self, node.value, seen)
    if isinstance(node, ast.Attribute):
        return deep(self, node.value, seen)
    if isinstance(node, ast.IfExp):
        return fresh(self, node.body, seen) and fresh(self, node.orelse, seen)
    if isinstance(node, ast.BoolOp):
        return all(fresh(self, value, seen) for value in node.values)
    if isinstance(node, ast.NamedExpr):
        return fresh(self, node.value, seen)
    if isinstance(node, ast.Starred):
        return deep(self, node.value, seen)
    if isinstance(node, ast.Call):
        return _call(self, node, seen, shallow=True)
    return False  # a yield's value, an await's: anything


def deep(self: Any, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node``'s object and every object in it were made by this call or given by its caller."""
    if isinstance(node, ast.Name):
        return _name(self, node.id, seen, deep)
    if isinstance(node, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(deep(self, element, seen) for element in node.elts)
    if isinstance(node, ast.Dict):
        return all(deep(self, part, seen) for part in [*filter(None, node.keys), *node.values])
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return deep(self, node.elt, seen)
    if isinstance(node, ast.DictComp):
        return deep(self, node.key, seen) and deep(self, node.value, seen)
    if isinstance(node, ast.BinOp):
        return deep(self, node.left, seen) and deep(self, node.right, seen)
    if isinstance(node, (ast.Subscript, ast.Attribute, ast.NamedExpr, ast.Starred)):
        return deep(self, node.value, seen)
    if isinstance(node, ast.IfExp):
        return deep(self, node.body, seen) and deep(self, node.orelse, seen)
    if isinstance(node, ast.BoolOp):
        return all(deep(self, value, seen) for value in node.values)
    if isinstance(node, ast.Call):
        return _call(self, node, seen, shallow=False)
    return False


def _name(self: Any, name: str, seen: frozenset[str], judge: Any) -> bool:
    if name == UNKNOWN:
        return False
    if not self.local(name):  # a global: only plain immutable data is no state a write could change
        return immutable(self.namespace.get(name, MISSING))
    if name in seen:
        return True
    values = self.values.get(name)
    if values:
        return all(judge(self, value, seen | {name}) for value in values)
    # bound to nothing recorded: a parameter without a default (the caller's), a function or class defined here
    return name not in self.aliases


def _call(self: Any, node: ast.Call, seen: frozenset[str], shallow: bool) -> bool:
    """Whether what a call returns is fresh (``shallow``) or deep."""
    func, given = node.func, [*node.args, *(k.value for k in node.keywords)]

    def made_from_arguments() -> bool:
        return all(deep(self, arg, seen) for arg in given)

    if isinstance(func, ast.Name):
        if self.local(func.id):  # a class of the call's own makes an instance; a function's result is anything
            return func.id in self.classes and (shallow or made_from_arguments())
        value = self.namespace.get(func.id, MISSING)
        if value is MISSING:  # a builtin
            if func.id in ("type", "super", "vars", "globals", "locals"):  # a class, or a namespace
                return False
            if func.id in _IMMUTABLE:
                return True
            if func.id in _CONTAINERS:
                return (shallow and func.id != "sum") or made_from_arguments()
            return made_from_arguments()  # min, max, next, getattr, iter…: one of their arguments, or a part
        return isinstance(value, type) and (shallow or made_from_arguments())  # your module's class: an instance
    if isinstance(func, ast.Attribute):
        dotted = self.module_path(func)
        if dotted is not None:  # a module's function or class
            if dotted == "copy.deepcopy" or (shallow and dotted == "copy.copy"):
                return True
            return (shallow and pure_chain(dotted) is None and _class(dotted)) or made_from_arguments()
        if func.attr == "copy" and shallow:  # ``DEFAULTS.copy()``: a new container of the same parts
            return True
        return deep(self, func.value, seen) and made_from_arguments()  # a part of the receiver, or of an argument
    return False


def _class(dotted: str) -> bool:
    """Whether the pure module's attribute ``dotted`` is a class (calling it makes an instance)."""
    import importlib

    module, _, name = dotted.rpartition(".")
    try:
        return isinstance(getattr(importlib.import_module(module), name), type)
    except (ImportError, AttributeError, ValueError):
        return False

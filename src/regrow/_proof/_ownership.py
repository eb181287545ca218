"""Whether a write lands in an object the call made (or was given), for the capability check: an allowlist.

Red teams found ways to reach a global through a local the check did not trace (a nested function's
parameter, a ``match`` capture, ``None or price``, ``{"k": price}["k"]``, ``sorted([price])[0]``, a list
filled after it was made, an exception's ``args``, a generator's ``send``, a local class's attribute) and then
write to it: a counter kept across calls. So a write — an attribute or item store, a mutating method, ``setattr``,
a decorator that writes into what it is given — is allowed only where the object written is **fresh**: made by
this call (a literal, a comprehension, a copy, a constructor, arithmetic) or the caller's (a parameter without a
default, a part of one); and a write into a part of an object only where that object is **deep**: it and
everything in it fresh. Anything else is refused, whether or not a route to a global is seen.

What each local is bound to comes from :func:`._capability_shapes.local_values`, where a name bound to a part of a
value (a loop's target, an unpacked element, a capture, a ``with`` name) is bound to ``value[0]`` (a part), and a
local class to a tuple of what its body binds (a container made now, holding those).
"""

from __future__ import annotations

import ast
from typing import Any

from ._scopes import MISSING
from ._vocabulary import immutable, pure_builtin, pure_chain

UNKNOWN = "<unknown>"  # bound to a parameter of a function passed as a value, and to an ``except`` name: anything
INSTANCE = ast.Call(ast.Name("object", ast.Load()), [], [])  # what a method's ``self`` is bound to: an instance
_MADE = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
         ast.GeneratorExp, ast.Lambda)  # each evaluation makes a new object
_OPERATORS = (ast.UnaryOp, ast.Compare, ast.BinOp)  # a new object, unless a class of the candidate's overloads them
_CONTAINERS = frozenset({"list", "dict", "set", "frozenset", "tuple", "sorted", "bytearray", "reversed", "sum"})
_MAKERS = frozenset({"list", "dict", "set", "frozenset", "tuple", "sorted", "bytearray"})  # each call a new one
_IMMUTABLE = frozenset({"str", "int", "float", "bool", "bytes", "complex", "len", "abs", "round", "repr", "ascii",
                        "format", "any", "all", "isinstance", "issubclass", "callable", "ord", "chr", "hex", "oct",
                        "bin", "divmod", "pow", "hash", "id"})  # builtins whose result holds no object of theirs
# Module functions whose result is new (or immutable) whatever they are given.
_NEW = frozenset({"json.loads", "json.dumps", "re.match", "re.search", "re.fullmatch", "re.findall",
                  "re.split", "re.sub", "re.subn", "textwrap.wrap", "textwrap.dedent", "textwrap.fill", "shlex.split",
                  "urllib.parse.parse_qs", "urllib.parse.parse_qsl", "urllib.parse.urlsplit", "urllib.parse.urlparse"})
_COPIED = (dict, list, set, bytearray, bytes, str, tuple, frozenset)  # a copy (or a slice) of one is a new object
# Methods of the standard library's types whose result is new (or immutable), on a receiver known to be one.
_NEW_METHODS = frozenset({"copy", "groupdict", "groups", "group", "findall", "split", "rsplit", "splitlines", "match",
                          "search", "fullmatch", "sub", "most_common", "isoformat", "strip", "lower", "upper",
                          "replace", "join", "format", "encode", "decode", "keys", "values", "items"})
_PARTS_OF_RECEIVER = frozenset({"copy", "keys", "values", "items", "most_common", "split", "rsplit"})
_RETURNS_SHARED = frozenset({"typing.overload"})  # hands back a module-level object, whatever it is given


def fresh(self: Any, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether the object ``node`` evaluates to was made by this call or given by its caller."""
    if isinstance(node, ast.Name):
        return _name(self, node.id, seen, fresh)
    if isinstance(node, _MADE):
        return True
    if isinstance(node, _OPERATORS):  # ``T | T`` is ``T``, ``~~FLAG`` a cached member: judged by their operands
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.BitAnd, ast.BitXor)):
            return fresh(self, node.left, seen) and fresh(self, node.right, seen)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return fresh(self, node.operand, seen)
        return not _overloaded(self)
    if isinstance(node, ast.Subscript):
        if isinstance(node.slice, ast.Slice):  # a list's slice is a copy; a memoryview's is a view of it
            return _copies(self, node.value, seen) or deep(self, node.value, seen)
        return _parts_fresh(self, node.value, seen)
    if isinstance(node, ast.Attribute):
        return deep(self, node.value, seen)
    if isinstance(node, ast.IfExp):
        return fresh(self, node.body, seen) and fresh(self, node.orelse, seen)
    if isinstance(node, ast.BoolOp):
        return all(fresh(self, value, seen) for value in node.values)
    if isinstance(node, ast.NamedExpr):
        return fresh(self, node.value, seen)
    if isinstance(node, ast.Starred):
        return _parts_fresh(self, node.value, seen)
    if isinstance(node, ast.Call):
        return _call(self, node, seen, shallow=True)
    return False  # a yield's value, an await's: anything


def deep(self: Any, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node``'s object and every object in it were made by this call or given by its caller."""
    if isinstance(node, ast.Name):
        return _name(self, node.id, seen, deep)
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, _OPERATORS):
        return not _overloaded(self) and all(deep(self, part, seen) for part in ast.iter_child_nodes(node)
                                             if isinstance(part, ast.expr))
    if isinstance(node, ast.Lambda):  # calling it hands back its body's value
        return deep(self, node.body, seen)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(deep(self, element, seen) for element in node.elts)
    if isinstance(node, ast.Dict):
        return all(deep(self, part, seen) for part in [*filter(None, node.keys), *node.values])
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return deep(self, node.elt, seen)
    if isinstance(node, ast.DictComp):
        return deep(self, node.key, seen) and deep(self, node.value, seen)
    if isinstance(node, (ast.Subscript, ast.Attribute, ast.NamedExpr, ast.Starred)):
        return deep(self, node.value, seen)
    if isinstance(node, ast.IfExp):
        return deep(self, node.body, seen) and deep(self, node.orelse, seen)
    if isinstance(node, ast.BoolOp):
        return all(deep(self, value, seen) for value in node.values)
    if isinstance(node, ast.Call):
        return _call(self, node, seen, shallow=False)
    return False


def _parts_fresh(self: Any, node: ast.expr, seen: frozenset[str]) -> bool:
    """Whether each object directly inside ``node``'s was made by this call (``[dict(r) for r in ROWS]``: each row is
    a new dict, though what the rows hold is not), or given by its caller."""
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return fresh(self, node.elt, seen)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(fresh(self, element, seen) for element in node.elts)
    if isinstance(node, ast.Name) and self.local(node.id) and node.id not in seen and self.values.get(node.id):
        return all(_parts_fresh(self, value, seen | {node.id}) for value in self.values[node.id])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not self.local(node.func.id) and node.args:
        if node.func.id in ("list", "tuple", "sorted", "set", "frozenset", "reversed") and len(node.args) == 1:
            return _parts_fresh(self, node.args[0], seen)
        if node.func.id == "map" and isinstance(node.args[0], ast.Name) and node.args[0].id in _MAKERS:
            return True  # map(dict, rows): a new dict each (not sum: ``sum([], X)`` is ``X``)
    return deep(self, node, seen)


def _name(self: Any, name: str, seen: frozenset[str], judge: Any) -> bool:
    if name == UNKNOWN:
        return False
    # (a comprehension's variable is bound in a scope of its own: known by its values, unless a global has its name)
    if not self.local(name) and (name not in self.values or name in self.namespace or pure_builtin(name)):
        # a global: only plain immutable data (or a builtin) is no state a write could change
        value = self.namespace.get(name, MISSING)
        return immutable(value) or (value is MISSING and pure_builtin(name))
    if name in seen:
        return True
    values = self.values.get(name)
    if values:
        return all(judge(self, value, seen | {name}) for value in values)
    # bound to nothing recorded: a parameter without a default (the caller's)
    return name not in self.aliases


def _call(self: Any, node: ast.Call, seen: frozenset[str], shallow: bool) -> bool:
    """Whether what a call returns is fresh (``shallow``) or deep."""
    func, given = node.func, [*node.args, *(k.value for k in node.keywords)]

    def made_from_arguments() -> bool:
        return all(deep(self, arg, seen) for arg in given)

    if isinstance(func, ast.Name):
        if self.local(func.id):  # a class of the call's own makes an instance (its class's attributes are in it);
            if func.id in self.classes:  # a function of its own, what its returns say (a lambda's body, a def's
                return shallow or (made_from_arguments() and deep(self, func, seen)  # return statements)
                                   and not _overloaded(self))  # (``K()[0]``: what its __getitem__ returns)
            returned = _returns(self, func.id)
            judge = fresh if shallow else deep
            return returned is not None and func.id not in seen and \
                all(judge(self, value, seen | {func.id}) for value in returned)
        value = self.namespace.get(func.id, MISSING)
        if value is MISSING:  # a builtin
            if func.id in ("type", "super", "vars", "globals", "locals"):  # a class, or a namespace
                return False
            if _overloaded(self):  # ``abs(K())``, ``reversed(K())``: a class of the candidate's answers for them
                return made_from_arguments() and func.id not in ("reversed", "sum", "next", "iter", "min", "max")
            if func.id in _IMMUTABLE:
                return True
            if func.id in _CONTAINERS:
                return (shallow and func.id != "sum") or made_from_arguments()
            return made_from_arguments()  # min, max, next, getattr, iter…: one of their arguments, or a part
        return _new_instance(value) and (shallow or made_from_arguments())  # your module's class: an instance
    if isinstance(func, ast.Attribute):
        dotted = self.module_path(func)
        if dotted is not None:  # a module's function or class
            if dotted in _RETURNS_SHARED:
                return False
            if dotted in ("copy.copy", "copy.deepcopy"):  # a new object only of a container: a function, a class,
                # an enum member are handed back as they are
                return bool(node.args) and _copies(self, node.args[0], seen) and (shallow or dotted == "copy.deepcopy"
                                                                                  or deep(self, node.args[0], seen))
            if dotted in _NEW and not node.keywords:  # (``json.loads(t, object_hook=…)`` returns what the hook does)
                return True
            made = _resolve(dotted)
            if _new_instance(made):  # an instance: deep only of a value class (``Template("x").flags`` is a module
                # object, ``field().default`` a sentinel)
                return (shallow and pure_chain(dotted) is None) or (made_from_arguments() and _value_class(made))
            return made_from_arguments() and not _class_state(made)
        if func.attr in self.methods:  # a method of a class of the candidate's own: it returns anything
            return False
        if func.attr in _NEW_METHODS and (_stdlib(self, func.value) or (func.attr == "copy"
                                                                          and _copies(self, func.value, seen))):
            # ``PATTERN.match(text).groupdict()``: new objects of new parts; ``DEFAULTS.copy()``, ``.values()``:
            # a new container (or a view) of the receiver's own parts
            return shallow or func.attr not in _PARTS_OF_RECEIVER or deep(self, func.value, seen)
        return deep(self, func.value, seen) and made_from_arguments()  # a part of the receiver, or of an argument
    return False


def _copies(self: Any, node: ast.expr, seen: frozenset[str]) -> bool:
    """Whether copying (or slicing) ``node`` makes a new object: it is a builtin container (a global's value says
    so, a literal, a constructor, a local bound only to such), or the caller's (a parameter)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not self.local(node.func.id):
        return node.func.id in _CONTAINERS or node.func.id in _IMMUTABLE
    if isinstance(node, ast.Name) and (self.local(node.id) or node.id in self.values) and \
            node.id not in self.namespace:
        values = self.values.get(node.id)
        if not values:
            return node.id not in self.aliases  # a parameter: the caller's
        return node.id not in seen and all(_copies(self, value, seen | {node.id}) for value in values)
    if isinstance(node, ast.Name):
        value = self.namespace.get(node.id, MISSING)
    elif isinstance(node, ast.Attribute) and (dotted := self.module_path(node)) is not None:
        value = _resolve(dotted)
    else:
        return False
    return isinstance(value, _COPIED) or type(value).__module__ == "collections"


def _returns(self: Any, name: str) -> list[ast.expr] | None:
    """What calling the candidate's own function ``name`` hands back (its returns, a lambda's body), or None."""
    values = self.values.get(name, [])
    if len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, ast.Lambda):
        return [value.body]
    return list(value.elts) if isinstance(value, ast.Tuple) and name in getattr(self, "functions", ()) else None


def _overloaded(self: Any) -> bool:
    """Whether a class of the candidate's own defines an operator (``__add__`` may hand back anything)."""
    return any(name.startswith("__") and name.endswith("__") and name not in ("__init__", "__repr__", "__str__",
                                                                            "__post_init__")
               for name in self.methods)


def _stdlib(self: Any, node: ast.expr) -> bool:
    """Whether ``node`` is known to be an object of the standard library's (whose methods the check knows): a text, a
    global of a builtin or standard type, or what a known method of one returns."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(node, ast.Name) and not self.local(node.id):
        module = getattr(type(self.namespace.get(node.id)), "__module__", "")
        return module in ("builtins", "re", "collections", "datetime", "decimal", "fractions")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _NEW_METHODS:
        return node.func.attr not in self.methods and _stdlib(self, node.func.value)
    return False


def _resolve(dotted: str) -> object:
    import importlib

    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return None


def _new_instance(value: object) -> bool:
    """Whether calling ``value`` makes a new instance: a class, but not an enum (calling one hands back a member)."""
    import enum

    return isinstance(value, type) and not issubclass(value, enum.Enum)


def _value_class(value: object) -> bool:
    """Whether instances of the library class ``value`` hold nothing but what they are given (containers, numbers,
    dates), and the class no state of its own."""
    module = getattr(value, "__module__", "").lstrip("_")
    return module in ("collections", "decimal", "fractions", "datetime", "ipaddress", "array", "pydecimal") \
        and not _class_state(value)


def _class_state(value: object) -> bool:
    """Whether the class ``value`` keeps a mutable container at class level (``TextWrapper.unicode_whitespace_trans``:
    one dict for every instance in the process)."""
    if not isinstance(value, type):
        return False
    return any(type(item) in (dict, list, set, bytearray) for klass in value.__mro__ if klass is not object
               for item in vars(klass).values())

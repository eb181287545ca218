"""Shapes of code the capability check refuses whatever names they use (see :mod:`._capabilities`).

Each closes a route a red team took from a candidate that passed the checks to code that, once installed in
your process, did what the sandbox would have refused, or told the sandbox from your process:

- a module held as a value (``d = dataclasses``, a walrus, a tuple, a default, a ``match`` subject): what is
  reached through it afterwards is not followed, so ``d.inspect.os.system`` went unseen;
- a ``match`` class pattern's keyword names are attribute reads (``case object(inspect=object(os=…))``), a
  mapping pattern's keys are item reads (``{"__builtins__": …}``);
- a class body that binds interpreter dunders (``__annotations__`` with code in a field's name, which
  ``dataclasses`` compiles; ``__module__ = "builtins"``, which ``enum.global_enum`` writes into) or defines the
  special methods ``copy``, ``pickle``, attribute access and subclassing call behind the code's back
  (``__reduce_ex__`` made ``copy.copy`` a ``setattr`` on the function itself);
- ``type(name, bases, namespace)``, the same class body built from a dict, in any spelling (``type(int)(…)``, a
  local bound to ``type``, ``dataclasses.make_dataclass(namespace=…)``);
- (round 4) a private attribute (``K._convert_`` on an enum of the candidate's: it reads and writes any module's
  globals by name), a dunder name inside a text (``getattr(t, "format")`` on ``"{0.__globals__[os]}"``), an
  explicit ``__init__`` (``Random(7).__init__()`` reseeds from the world), a container's mutating method as a
  value (``map(dict.update, [table], …)``), a call wrapping shared state (``collections.ChainMap(table)[k] = v``)
  and a write to a module the function imports itself (``import json; json.dumps = repr``).
"""

from __future__ import annotations

import ast
import re
import string
import sys
import types
from collections.abc import Iterator
from typing import Any

from . import _capability_routes as routes
from ._handlers import broad_handlers
from ._ownership import UNKNOWN, fresh
from ._scopes import constant
from ._vocabulary import MUTATING_METHODS, PURE_BUILTINS, immutable

_CLASS_STATE = frozenset({"type", "super", "vars"})  # builtins that hand back the class (or a namespace)
# A dunder name in a text: ``"{0.__globals__}"``, ``{"__reduce_ex__": …}`` (``"__init__.py"``, a file's name, is none).
DUNDER_TEXT = re.compile(r"__\w+__(?!\.pyi?\b)")
_PARTS = re.compile(r"\.([^.\[]*)|\[([^\]]*)\]")  # a format field's attributes and items after its first name
_CONTAINERS = frozenset({"list", "dict", "set", "bytearray", "object"})
# Module functions that make a class from a namespace the candidate fills (see made_class).
_CLASS_MAKERS = frozenset({"dataclasses.make_dataclass", "types.new_class", "types.prepare_class"})
EXPLICIT_INIT = ("init:explicit", "an explicit __init__ (it makes an object again in place)")  # (key, reason)
# Special methods a candidate's class may not define: called by copy/pickle, attribute access, descriptors,
# subclassing and the garbage collector — code that runs where no call of the candidate's shows it.
HIDDEN_HOOKS = frozenset({
    "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__copy__", "__deepcopy__", "__getnewargs__",
    "__getnewargs_ex__", "__init_subclass__", "__set_name__", "__class_getitem__", "__getattr__", "__getattribute__",
    "__setattr__", "__delattr__", "__get__", "__set__", "__delete__", "__del__", "__prepare__", "__instancecheck__",
    "__subclasscheck__", "__mro_entries__", "__new__", "__subclasshook__",
})  # fmt: skip


def is_module_alias(name: str, dotted: str) -> bool:
    """Whether an import binding (``name`` for ``dotted``) holds a module, as far as this process tells."""
    return isinstance(sys.modules.get(dotted), types.ModuleType)


def class_body(node: ast.ClassDef) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for each dunder a class body binds or hook it defines that the check refuses."""
    yield from routes.class_body(node)
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in HIDDEN_HOOKS:
            yield f"class-hook:{stmt.name}", f"a class defining {stmt.name} (called where no call shows it)"


def match_class(self: Any, node: ast.MatchClass) -> Iterator[str]:
    """The attribute names a class pattern reads (``case object(inspect=…)`` reads ``.inspect``); a mutating method
    captured (``case object(append=push)``, then ``push(x)``) is refused."""
    for attr in node.kwd_attrs:
        if attr in MUTATING_METHODS:
            self.add(f"match-mutating:{attr}", f"a class pattern capturing the mutating method {attr}")
        yield attr


def match_keys(node: ast.MatchMapping) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for each dunder key a mapping pattern reads (``{"__builtins__": …}``)."""
    for key in node.keys:
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("__"):
            yield f"dunder-key:{key.value}", f"a dunder key {key.value!r} read by a mapping pattern"


def owner(self: Any, node: ast.expr) -> str | None:
    """What object ``node`` is part of, when that is state outliving a call (see :func:`owner_of`), or when the call
    did not make it (:func:`._ownership.fresh`: writes go only into what the call made or was given); else None."""
    found = owner_of(self, node)
    return found if found is not None or fresh(self, node) else \
        f"what {ast.unparse(node)[:40]} holds (an object this call did not make)"


def owner_of(self: Any, node: ast.expr) -> str | None:
    """What object ``node`` is part of, when that is state outliving a call: ``"the global object X"``,
    ``"the class"``; None for the arguments, locals and objects the call made."""
    while True:
        if isinstance(node, ast.Attribute):
            if node.attr == "__class__":
                return "the class"
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and not self.local(func.id):
                if func.id in _CLASS_STATE:
                    return f"the class ({func.id}(...))"
                if func.id == "getattr" and node.args:
                    node = node.args[0]
                    continue
                if func.id in PURE_BUILTINS:
                    return None  # list(...), sorted(...): a fresh object
                return f"the global object {func.id} (what it returns)"
            if not isinstance(func, ast.Attribute) or self.module_path(func) is not None:
                # A module's function (collections.Counter()) makes a fresh object, unless it wraps one that
                # outlives the call: ``collections.ChainMap(table)[k] = v`` writes into ``table``
                wrapped = next((arg for arg in node.args if shared(self, arg)), None)
                return None if wrapped is None else f"what {ast.unparse(wrapped)[:40]} holds (wrapped by a call)"
            node = func.value  # x.setdefault(k, []).append(v) writes into x
        elif isinstance(node, ast.Name):
            if self.local(node.id) and node.id in self.aliases:  # ``import json`` in the function: the module
                return f"the module {self.aliases[node.id]}"
            if self.local(node.id):  # a local holding a class or a global object is that object (``T = type(x)``)
                return f"what {node.id} holds (a class or a global object)" if shared(self, node) and \
                    not fresh(self, node) else None  # (and what it does not hold, Capabilities.owner asks)
            made = node.id in PURE_BUILTINS and node.id not in _CLASS_STATE and node.id not in self.namespace
            return None if made else f"the global object {node.id}"
        else:
            return None



def local_values(function: ast.AST) -> dict[str, list[ast.expr]]:
    """What each name bound in ``function`` (nested scopes too) is bound to: an assignment's or a walrus's value; a
    part of a value (``value[0]``, see :mod:`._ownership`) for a loop's target, an unpacked element, a ``with`` name,
    a ``match`` capture; anything (:data:`._ownership.UNKNOWN`) for an ``except`` name; a tuple of what its body
    assigns for a class; a parameter's default and what the calls of a nested function pass it."""
    found: dict[str, list[ast.expr]] = {}

    def bind_name(name: str, value: ast.expr) -> None:
        found.setdefault(name, []).append(value)

    def bind(target: ast.AST | None, value: ast.expr, whole: bool = True) -> None:
        if isinstance(target, ast.Name) and whole:
            bind_name(target.id, value)
            return
        part = ast.Subscript(value, ast.Constant(0), ast.Load())
        for node in ast.walk(target) if target is not None else ():
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bind_name(node.id, part)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
                base = node.value  # ``for box[0] in [price]``: what is stored into a local is part of what it holds
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    bind_name(base.id, ast.Tuple([value if whole else part], ast.Load()))

    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            bind(node.target, node.iter, whole=False)
        elif isinstance(node, ast.withitem):
            bind(node.optional_vars, node.context_expr, whole=False)
        elif isinstance(node, ast.Match):
            routes.bind_captures(node, bind_name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind_name(node.name, ast.Name(UNKNOWN, ast.Load()))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.attr in MUTATING_METHODS:
            # ``box.append(price)``: what is put into a local afterwards is part of what it holds
            bind_name(node.func.value.id, ast.Tuple([*node.args, *(k.value for k in node.keywords)], ast.Load()))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            bind_name(node.target.id, ast.Tuple([node.value], ast.Load()))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not function:
            returned = [n.value for n in ast.walk(node) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                        and n.value]
            if not isinstance(node, ast.Lambda):  # calling it (or passing it to map, reduce…) hands back these
                bind_name(node.name, ast.Tuple(returned, ast.Load()))
        elif isinstance(node, ast.ClassDef):
            bind_name(node.name, ast.Tuple(routes.class_contents(node), ast.Load()))
    routes.bind_parameters(function, bind_name)
    return found


def outermost(self: Any, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str]]:
    """What the function installed is judged by before its body: its defaults (each visited), and what its body binds
    (the locals' values, its classes, a method's ``self``, whether it names ``random.Random``)."""
    found = [*routes.defaults(self, node), *broad_handlers(node, self.namespace)]
    self.values, self.instance = local_values(node), routes.instance_name(node)
    self.classes = local_classes(node)
    self.methods = local_methods(node)
    self.functions = {n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and n is not node and n.name not in self.methods}
    self.randomness = routes.randomness(node, self.namespace)
    return found


def local_classes(function: ast.AST) -> set[str]:
    """The names of the classes ``function`` defines (calling one makes an instance of the call's own)."""
    return {node.name for node in ast.walk(function) if isinstance(node, ast.ClassDef)}


def local_methods(function: ast.AST) -> set[str]:
    """The names of the methods the classes ``function`` defines have (what one returns is anything)."""
    return {stmt.name for node in ast.walk(function) if isinstance(node, ast.ClassDef) for stmt in node.body
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}


def shared(self: Any, node: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` is (or holds, for a literal container) an object that outlives the call: a global, a module's
    class or function, a class (``type(x)``, ``x.__class__``, ``super()``), or what a local bound to one holds."""
    if isinstance(node, ast.Name):
        if node.id == UNKNOWN:
            return True
        if not self.local(node.id):  # plain immutable data (a number, a text) is no state a write could change
            return node.id in self.namespace and not immutable(self.namespace[node.id])
        return node.id not in seen and any(shared(self, value, seen | {node.id})
                                           for value in self.values.get(node.id, ()))
    if isinstance(node, ast.Attribute):
        return self.module_path(node) is not None or node.attr == "__class__" or shared(self, node.value, seen)
    if isinstance(node, ast.Subscript):
        return shared(self, node.value, seen)
    if isinstance(node, ast.Call):
        return routes.shared_call(self, node, seen, shared)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.BoolOp)):
        parts = node.values if isinstance(node, ast.BoolOp) else node.elts
        return any(shared(self, element, seen) for element in parts)
    if isinstance(node, ast.Dict):
        return any(shared(self, value, seen) for value in node.values)
    if isinstance(node, ast.IfExp):
        return shared(self, node.body, seen) or shared(self, node.orelse, seen)
    if isinstance(node, (ast.Starred, ast.NamedExpr)):
        return shared(self, node.value, seen)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return shared(self, node.elt, seen)
    return False


def reflection(self: Any, node: ast.Call, func: str) -> None:
    """``getattr(x, "name")`` is ``x.name``; with a name built at run time it is refused."""
    if len(node.args) < 2:
        return
    name = constant(node.args[1])
    if name is None:
        self.add(f"reflect:{func}", f"reflection with a computed name ({func})")
        return
    self.named(name)
    if func in ("setattr", "delattr"):
        self._write(node.args[0], f"attribute write on {{owner}} ({func} of {name})")
    elif name in ("timestamp", "astimezone", "fromtimestamp", "strftime"):  # the local zone, however named
        self.add(f"zone:{name}", f"the local time zone .{name} named through {func}")
    elif name in MUTATING_METHODS:  # ``getattr(SEEN, "append")(x)`` is ``SEEN.append(x)``
        self._write(node.args[0], f"mutating call {name} on {{owner}} (through getattr)")
    dotted = self.module_path(node.args[0])
    if dotted is not None:
        self._chain(f"{dotted}.{name}")
    else:
        self._world(name)


def format_template(self: Any, template: ast.expr) -> None:
    """``str.format`` reads the attributes and items its template names: each attribute is judged as if read in the
    code (``"{0.year}"`` as ``d.year``), a dunder item refused, a template not written in the code refused."""
    text = constant(template)
    if text is None:
        self.add("format:computed", "a format template not written in the code (str.format reads attributes)")
        return
    try:
        fields = _fields(text)
    except ValueError:
        self.add(f"format:{text}", "a format template that does not parse")
        return
    for field in fields:
        for attribute, key in _PARTS.findall(field):  # ``0.year[key].x``: ``.year``, ``[key]``, ``.x``
            if attribute:
                self.named(attribute)
                self._world(attribute)
            elif "__" in key:
                self.add(f"format:{text}", "a format template that reads a dunder item")


def _fields(text: str, depth: int = 0) -> Iterator[str]:
    """The field names of a format template, those nested in its format specs too (``{0:{1.width}}``)."""
    for _, field, spec, _ in string.Formatter().parse(text):
        if field is not None:
            yield field
        if spec and depth < 2:
            yield from _fields(spec, depth + 1)


def made_class(self: Any, node: ast.Call, dotted: str | None) -> str | None:
    """How ``node`` makes a class from a namespace (``type(name, bases, namespace)`` in any spelling: ``type(int)(…)``,
    a local bound to ``type``; ``dataclasses.make_dataclass``, ``types.new_class``), or ``None``."""
    if dotted in _CLASS_MAKERS:
        return dotted
    if len(node.args) != 3:
        return None
    func = node.func
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type":
        return "type(...)(name, bases, namespace)"
    if isinstance(func, ast.Name) and func.id == "type" and not self.local("type"):
        return "type(name, bases, namespace)"
    if isinstance(func, ast.Name) and self.local(func.id) and any(
            isinstance(value, ast.Name) and value.id == "type" for value in self.values.get(func.id, ())):
        return f"{func.id} (type) with a name, bases and a namespace"
    return None


def attribute_shapes(self: Any, node: ast.Attribute) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for an attribute read the check refuses whatever its object: an explicit ``__init__``
    (``random.Random(7).__init__()`` seeds it again from the world) but ``super().__init__``, and a mutating method
    of a builtin container passed as a value (``map(dict.update, [table], …)`` writes into what it is given)."""
    value = node.value
    if node.attr == "__init__" and not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                        and value.func.id == "super" and not value.args):  # (not super(K, ORDER))
        yield EXPLICIT_INIT
    if isinstance(value, ast.Name) and value.id in _CONTAINERS and not self.local(value.id) and \
            node.attr in MUTATING_METHODS and id(node) not in self.callees:
        yield f"unbound:{value.id}.{node.attr}", f"{value.id}.{node.attr} passed as a value (it writes into what " \
                                                  f"it is given)"

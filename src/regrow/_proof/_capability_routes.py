"""Routes the red teams of rounds 5 to 10 took past the capability check, closed (see :mod:`._capabilities`;
writes are judged in :mod:`._ownership`, handlers of the sandbox's limits in :mod:`._handlers`).

Round 5's, for one, each let a candidate that passed every check keep a counter across calls, read the clock or
the local time zone, or reach a module's globals once installed in your process:

- a default that holds a mutable object inside a tuple (``_box=([],)``), or aliases a global (``_self=price``);
- a global handed to a nested function's or a lambda's parameter, a ``match`` capture or a call that returns what
  it was given (``with nullcontext(price) as g``): writes through those names are writes to the global;
- an augmented assignment (``t |= {...}``) on a local that holds a shared dict, set or list;
- a process-wide counter kept by the standard library (``urlsplit.cache_info().hits``) and ``ABC.register``;
- a class decorator that writes into the class it is given (``dataclasses.dataclass(frozen=True)(TextWrapper)``);
- a class body binding interpreter dunders through ``for``, ``with``, ``import``, a walrus or a ``match`` capture;
- a class made by ``enum``'s functional API from names computed at run time;
- ``operator.attrgetter`` (or ``methodcaller``) held in a local, and asked for a world attribute (``"now"``);
- a ``__match_args__`` naming attributes by computed text (``case F(g)`` then reads ``__globals__``);
- ``random.Random`` subclassed, or an object's class called again (``x.__class__()``): seeded from the world;
- the local time zone (``astimezone()`` with no zone, ``fromtimestamp(t)`` with none).
"""

from __future__ import annotations

import abc
import ast
from collections.abc import Iterator
from typing import Any

from ._ownership import INSTANCE, UNKNOWN
from ._scopes import MISSING, bindings, constant, own_nodes
from ._vocabulary import IN_PLACE, MUTATING_METHODS

# Builtins whose result is a new object that holds none of its arguments (``list(CACHE)`` is a copy).
FRESH = frozenset({"list", "dict", "set", "frozenset", "tuple", "sorted", "str", "int", "float", "bool", "bytes",
                   "bytearray", "complex", "len", "sum", "abs", "round", "repr", "ascii", "format", "any", "all",
                   "isinstance", "issubclass", "callable", "ord", "chr", "hex", "oct", "bin", "divmod", "pow"})
# Calls that write into (or register) what they are given, directly or as a decorator (``dataclass(...)(cls)``).
DECORATORS = frozenset({"dataclasses.dataclass", "functools.total_ordering", "functools.update_wrapper",
                        "functools.wraps", "typing.final", "typing.runtime_checkable", "typing.no_type_check",
                        "abc.update_abstractmethods"})
_ENUMS = frozenset({"enum.Enum", "enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.StrEnum", "enum.ReprEnum"})
_RANDOMS = frozenset({"random.Random", "random.SystemRandom"})
_VALUE_REFLECTION = frozenset({"operator.attrgetter", "operator.methodcaller"})
# A method -> the positional arguments it takes without a zone (and so reads the local one).
_LOCAL_ZONE = {"astimezone": 0, "fromtimestamp": 1, "timestamp": 0}
_CLASS_DUNDERS_OK = frozenset({"__slots__", "__hash__", "__doc__", "__match_args__", "__eq__", "__repr__",
                               "__str__"})  # dunders a class body may bind: what everyday classes do


def bind_parameters(function: ast.AST, bind: Any) -> None:
    """Binds (``bind(name, value)``) each parameter of ``function`` and the functions nested in it to its default,
    and a nested function's parameters to what its calls pass (to :data:`UNKNOWN` where it is passed as a value)."""
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    unknown = ast.Name(UNKNOWN, ast.Load())
    for node in ast.walk(function):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        every = [*positional, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]
        for arg, default in default_pairs(args):  # a lambda made once, at install: the same object on every call
            bind(arg.arg, unknown if isinstance(default, ast.Lambda) else default)
        if node is function:
            continue
        klass = parents.get(id(node))
        method = isinstance(klass, ast.ClassDef)
        if isinstance(klass, ast.ClassDef) and positional and _only_constructed(function, klass, parents):
            bind(positional[0].arg, INSTANCE)  # ``self``: an instance made by the call (its class is the candidate's)
            every = every[1:]
        calls = None if method else _call_sites(function, node, parents)  # a method is called by attribute
        for call in calls if calls is not None else [ast.Call(unknown, [unknown], [ast.keyword(None, unknown)])]:
            spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
            given = [a for a in call.args if not isinstance(a, ast.Starred)] + [k.value for k in call.keywords]
            for arg in every:  # which argument lands where is not worked out: each may hold any of them
                for value in [*given, *([unknown] if spread else [])]:
                    bind(arg.arg, value)


def default_pairs(args: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter that has a default, with its default expression."""
    positional = [*args.posonlyargs, *args.args]
    return [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
            *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)]


def _call_sites(function: ast.AST, nested: ast.AST, parents: dict[int, ast.AST]) -> list[ast.Call] | None:
    """The calls of ``nested`` in ``function`` when it is only ever called there (by its name, or a lambda called
    where it stands or bound to a name), else ``None``."""
    parent = parents.get(id(nested))
    if isinstance(nested, ast.Lambda):
        if isinstance(parent, ast.Call) and parent.func is nested:
            return [parent]
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return None
        name = parent.targets[0].id
    else:
        assert isinstance(nested, (ast.FunctionDef, ast.AsyncFunctionDef))
        if nested.decorator_list:
            return None
        name = nested.name
    calls: list[ast.Call] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            call = parents.get(id(node))
            if not (isinstance(call, ast.Call) and call.func is node):
                return None
            calls.append(call)
    return calls or None  # never called by its name: called some other way, with anything


def _only_constructed(function: ast.AST, klass: ast.ClassDef, parents: dict[int, ast.AST]) -> bool:
    """Whether ``klass`` is only ever called to make an instance (``K(…)``): not read as a value (``k = K``,
    ``K.m(price)``), and no object's class is taken anywhere (``type(K()).m(X)``, ``x.__class__``)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == klass.name and isinstance(node.ctx, ast.Load):
            used = parents.get(id(node))  # called, or matched (``case K(v)``): not handed on as a value
            if not ((isinstance(used, ast.Call) and used.func is node) or isinstance(used, ast.MatchClass)):
                return False
        if isinstance(node, ast.Attribute) and (  # ``type(K()).m``, ``K().__class__.m``: the class read
                node.attr == "__class__" or (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                                             and node.value.func.id == "type")):
            return False
    return True


def class_contents(node: ast.ClassDef) -> list[ast.expr]:
    """What a class body puts into its class, however it binds it (``for items in [X]``, ``with … as more``, a
    walrus); an import there binds a module: anything."""
    found: list[ast.expr] = []
    for part in own_nodes(node.body):
        if isinstance(part, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and part.value is not None:
            found.append(part.value)
        elif isinstance(part, (ast.For, ast.AsyncFor)):
            found.append(ast.Subscript(part.iter, ast.Constant(0), ast.Load()))
        elif isinstance(part, ast.withitem):
            found.append(ast.Subscript(part.context_expr, ast.Constant(0), ast.Load()))
        elif isinstance(part, (ast.Import, ast.ImportFrom)):
            found.append(ast.Name(UNKNOWN, ast.Load()))
    return found


def bind_captures(node: ast.Match, bind: Any) -> None:
    """A ``match`` statement's captures hold (parts of) its subject."""
    for case in node.cases:
        for part in ast.walk(case.pattern):
            if isinstance(part, (ast.MatchAs, ast.MatchStar)) and part.name:
                bind(part.name, node.subject)
            elif isinstance(part, ast.MatchMapping) and part.rest:
                bind(part.rest, node.subject)


def immutable_default(node: ast.expr) -> bool:
    """A default that makes no object a call could change: constants, names and attributes (what they hold is
    judged where it is written), tuples and arithmetic of those, ``float("inf")``, a lambda with such defaults."""
    if isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Tuple):
        return all(immutable_default(element) for element in node.elts)
    if isinstance(node, ast.UnaryOp):
        return immutable_default(node.operand)
    if isinstance(node, ast.BinOp):
        return immutable_default(node.left) and immutable_default(node.right)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in ("float", "int", "complex", "str", "bytes",
                                                                     "frozenset", "tuple") \
            and not node.keywords and all(immutable_default(arg) for arg in node.args)
    if isinstance(node, ast.Lambda):
        return all(immutable_default(d) for d in [*node.args.defaults, *filter(None, node.args.kw_defaults)])
    return False


def shared_call(self: Any, node: ast.Call, seen: frozenset[str], shared: Any) -> bool:
    """Whether what ``node`` returns may be (part of) an object that outlives the call."""
    func = node.func
    given = [*node.args, *(k.value for k in node.keywords)]
    holds = any(shared(self, arg, seen) for arg in given)  # nullcontext(x), next(iter(x)), max(x): what it was given
    if isinstance(func, ast.Name):
        if self.local(func.id):
            return holds or shared(self, func, seen)
        if func.id in ("type", "super", "vars"):
            return True
        if func.id in FRESH:
            return False
        return holds or func.id in self.namespace  # a module function of yours may return its own state
    if isinstance(func, ast.Attribute):
        if self.module_path(func) is not None:
            return holds
        return holds or shared(self, func.value, seen)  # CACHE.get(k): a part of CACHE
    return holds or shared(self, func, seen)


def class_body(node: ast.ClassDef) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for each dunder a class body binds, however (``for __reduce_ex__ in …``, a walrus, an
    import, a ``with`` or ``match`` name), other than the everyday ones and the methods it defines."""
    defined = {stmt.name for stmt in node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assigned = {n.id for stmt in node.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for name in sorted(bindings(node.body)):
        if name in defined and name not in assigned:
            continue  # a method: judged by name (the hidden hooks)
        if name.startswith("__") and name.endswith("__") and name not in _CLASS_DUNDERS_OK:
            yield f"class-dunder:{name}", f"a class body binding {name} (the interpreter reads it)"
    if any(isinstance(part, (ast.Import, ast.ImportFrom)) for part in own_nodes(node.body)):
        yield "class-import", "an import in a class body (the module becomes a class attribute: what is reached " \
                              "through it goes unchecked)"
    for stmt in node.body:
        match_args = isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__match_args__"
                                                          for t in stmt.targets)
        if match_args and isinstance(stmt, ast.Assign) and _names(stmt.value) is None:
            yield "class-match-args", "a class's __match_args__ not written as a tuple of names (a class pattern " \
                                      "reads the attributes it names)"


def match_args(node: ast.ClassDef) -> Iterator[str]:
    """The attribute names a class's ``__match_args__`` gives its class patterns to read."""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__match_args__"
                                                for t in stmt.targets):
            yield from _names(stmt.value) or ()


def _names(node: ast.expr) -> list[str] | None:
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    names = [name for name in map(constant, node.elts) if name is not None and name.isidentifier()]
    return names if len(names) == len(node.elts) else None


def call_shapes(self: Any, node: ast.Call, dotted: str | None) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for a call the check refuses whatever it is given."""
    func = node.func
    if dotted == "operator.attrgetter":
        names = [constant(arg) for arg in node.args]
        if any(name is None or "__" in name or "." in name for name in names):  # "inspect.os.system": a chain
            yield "reflect:attrgetter", "reflection with a computed or dotted name (operator.attrgetter)"
        for name in names:  # judged as attributes read in the code; a mutating method taken to be called later
            self.named(name or "")
            self._world(name or "")
            if name in MUTATING_METHODS:
                yield "reflect:mutating", f"operator.attrgetter of the mutating method {name}"
    elif dotted == "random.Random" and not seeded(node):
        yield "random:unseeded", "randomness random.Random seeded from the world (or an object)"
    elif dotted == "decimal.localcontext" and not any(
            not (isinstance(given, ast.Constant) and given.value is None)
            for given in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "ctx")]):
        yield "decimal:context", "decimal.localcontext() copies the thread's context (its flags are state kept " \
                                 "across calls): give it a Context"
    writes = {"struct.pack_into": 1}.get(dotted or "") if dotted else \
        {"shuffle": 0, "pack_into": 0}.get(func.attr) if isinstance(func, ast.Attribute) else None
    if writes is not None:  # ``rng.shuffle(RATES)``, ``shuffle(x=RATES)``: writes into what it is given
        for given in [*node.args[writes:writes + 1], *(k.value for k in node.keywords if k.arg in ("x", "buffer"))]:
            owner = self.owner(given)
            if owner is not None:
                yield f"write:{owner}", f"{dotted or getattr(func, 'attr', '')} writes into {owner}"
    for given in [*node.args, *(k.value for k in node.keywords)]:  # a defaultdict handed on: a read may add a key
        if isinstance(given, ast.Name) and not self.local(given.id) and not (isinstance(func, ast.Name) and func.id
                in ("len", "list", "sorted", "dict", "iter", "isinstance", "bool", "set", "tuple")) and \
                hasattr(type(self.namespace.get(given.id, MISSING)), "__missing__"):
            yield f"missing:{given.id}:{ast.dump(func)[:80]}", \
                f"the defaultdict {given.id} handed to a call (reading it there may add a key)"
    spelled = (constant(node.args[0]) or (self.namespace.get(node.args[0].id) if isinstance(node.args[0], ast.Name)
                                          and not self.local(node.args[0].id) else None)) if node.args else None
    if isinstance(func, ast.Attribute) and func.attr == "strftime" and (
            not isinstance(spelled, str) or "%s" in spelled):
        yield "zone:strftime", "strftime with %s or a computed format (the machine's time zone and locale)"
    if isinstance(func, ast.Attribute) and func.attr == "register":
        yield "register", "a class registered as another's virtual subclass (.register: class patterns and " \
                          "isinstance then see what it names)"
    # dataclass(cls), dataclass(frozen=True)(cls), partial(dataclass, …)(cls), d(cls) with d = dataclass(…)
    made = [func] if isinstance(func, ast.Call) else [v for v in self.values.get(func.id, ()) if
                                                      isinstance(v, ast.Call)] if isinstance(func, ast.Name) else []
    by = {dotted} | {self.module_path(part) for call in made for part in [call.func, *call.args]}
    decorator = next((path for path in by if path in DECORATORS), None)
    if decorator is not None and node.args:
        owner = self.owner(node.args[0])
        if owner is not None:
            yield f"write:{owner}", f"{decorator} on {owner} (it writes into the class it is given)"
    if dotted in _ENUMS and (len(node.args) > 1 or any(k.arg == "names" for k in node.keywords)):
        yield "class-made:enum", f"a class made by {dotted}'s functional API (its names become class attributes)"
    again = (isinstance(func, ast.Attribute) and func.attr == "__class__") or \
        (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type")
    if self.randomness and again:
        yield "class-again", "an object's class called to make another beside random.Random (type(r)() seeds a " \
                             "generator from the world)"
    aware = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and any(
        k.arg in ("tz", "tzinfo") for k in func.value.keywords)  # ``datetime(…, tzinfo=utc).timestamp()``
    zone = [*node.args[_LOCAL_ZONE.get(getattr(func, "attr", ""), 9):], *(k.value for k in node.keywords
                                                                           if k.arg == "tz")]
    zoned = any(not (isinstance(z, ast.Constant) and z.value is None) for z in zone)  # a zone, not None
    if isinstance(func, ast.Attribute) and func.attr in _LOCAL_ZONE and not aware and not (
            zoned and func.attr == "fromtimestamp"):  # a naive datetime's astimezone(tz) reads the local zone too
        yield f"zone:{func.attr}", f"the local time zone .{func.attr}() with no zone (the machine's TZ and files)"


def randomness(function: ast.AST, namespace: Any) -> bool:
    """Whether ``function`` names ``random.Random`` (or ``SystemRandom``) or reads a global generator: then calling an
    object's class (``type(r)()``) may make a generator seeded from the world."""
    import random  # the check's own use: isinstance below

    names = {"Random", "SystemRandom"}
    for node in ast.walk(function):
        if (isinstance(node, ast.Attribute) and node.attr in names) or (isinstance(node, ast.Name) and (
                node.id in names or isinstance(namespace.get(node.id), random.Random))):
            return True
        if isinstance(node, ast.ImportFrom) and any(alias.name in names for alias in node.names):
            return True
    return False


def seeded(node: ast.Call) -> bool:
    """``random.Random(seed)`` with a literal seed: the same numbers in the sandbox and in your process (``None``, no
    seed or an object's hash draws from the world)."""
    given = [*node.args, *(k.value for k in node.keywords)]
    return len(given) == 1 and isinstance(given[0], ast.Constant) and given[0].value is not None \
        and isinstance(given[0].value, (int, float, str, bytes))


def defaults(self: Any, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for each default of the function installed (evaluated once, in your process) that makes an
    object a call could change: state kept from one call to the next."""
    for arg, default in default_pairs(node.args):
        self.visit(default)
        if not immutable_default(default):
            yield f"default:{arg.arg}:{ast.dump(default)}", f"a mutable default value for {arg.arg} (state kept " \
                                                             "across calls)"


def class_bases(self: Any, node: ast.ClassDef) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for a class the check refuses for what it derives from."""
    for base in node.bases:
        dotted = self.module_path(base)
        if dotted in _RANDOMS:
            yield "random:subclass", f"a subclass of {dotted} (seeded from the world where it is made)"
        if dotted in _ENUMS:
            self.enums.add(node.name)
        name = base.id if isinstance(base, ast.Name) and not self.local(base.id) else ""
        klass = self.namespace.get(name, MISSING)
        if isinstance(klass, type) and (type(klass) not in (type, abc.ABCMeta) or any(
                "__init_subclass__" in vars(k) for k in klass.__mro__ if k is not object)):
            yield f"subclass:{name}", f"a subclass of {name}, whose __init_subclass__ or metaclass runs each time " \
                                      f"one is made"


def value_reflection(self: Any, node: ast.expr) -> Iterator[tuple[str, str]]:
    """``(key, reason)`` for ``operator.attrgetter`` or a class decorator read as a value (held in a local, passed;
    a decorator written with ``@`` is called): the names or the class it is later given go unseen."""
    dotted = self.module_path(node) if isinstance(node, ast.Attribute) else \
        self.aliases.get(node.id) if isinstance(node, ast.Name) and self.local(node.id) else None
    if dotted in _VALUE_REFLECTION | DECORATORS | _RANDOMS | IN_PLACE and id(node) not in self.callees and \
            id(node) not in self.bases:
        yield "reflect:value", f"{dotted} passed as a value (what it is given goes unseen)"
    if isinstance(node, ast.Attribute) and node.attr in ("shuffle", "pack_into") and id(node) not in self.callees:
        yield "reflect:value", f".{node.attr} passed as a value (it writes into what it is given)"


def instance_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """A method's first parameter, when it is spelled ``self`` or ``cls``: the object of your own class it runs on."""
    first = [*function.args.posonlyargs, *function.args.args][:1]
    return first[0].arg if first and first[0].arg in ("self", "cls") else None


def own_attribute(self: Any, node: ast.Attribute) -> bool:
    """Whether ``node`` reads an attribute of the method's own ``self`` (never rebound): its private attributes are
    your class's (``self._items``), not a library's internals reached through a value."""
    value = node.value
    return isinstance(value, ast.Name) and value.id == self.instance and not self.values.get(value.id) \
        and len(self.scopes) == 1


def adds_on_read(self: Any, node: ast.expr) -> bool:
    """Whether reading an item of ``node`` may add one: a global (or a local bound to one) whose class has
    ``__missing__`` (``GROUPS[k]`` on a ``defaultdict`` inserts ``k``)."""
    names = [node.id] if isinstance(node, ast.Name) else []
    if names and self.local(names[0]):
        names = [value.id for value in self.values.get(names[0], ()) if isinstance(value, ast.Name)]
    return any(not self.local(name) and hasattr(type(self.namespace.get(name, MISSING)), "__missing__")
               for name in names)


def enum_call(self: Any, node: ast.Call) -> Iterator[tuple[str, str]]:
    """A call of an enum class of the candidate's own with a name and members: the functional API again."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in self.enums and (
            len(node.args) > 1 or any(k.arg == "names" for k in node.keywords)):
        yield "class-made:enum", f"a class made by {func.id}'s functional API (its names become class attributes)"

"""The capability check: what a candidate not written by the engine adds to the original, refused.

A fix that behaves one way in the sandbox and another in your process must first *tell* them
apart, and everything that differs between a forked child and its host is outside the function:
the environment, files, clocks, randomness drawn from the world, the process and the interpreter
(hooks, ``sys``, threads, signals), and state kept from one call to the next (a counter in a
global, on the function, in a mutable default). So a candidate that did not come from the built-in
engine may use what its original already uses — its names, the modules it imports or reads from
its module's globals, the attribute chains it reaches on them, the global objects it writes — plus
a small pure vocabulary (:mod:`regrow._proof._vocabulary`). Anything else is refused before it runs, with
the rule named, e.g. ``capability: new import of os (the original imports none)``.

Like the rails (:mod:`regrow._proof._rails`) this judges source text; unlike them it is an allowlist: a
name it does not know is refused, not let through. Attributes of the arguments and of the objects
the original already reaches are not limited, except dunder names, names that reach the world on
any object (``now``, ``read_text``, ``environ``…) and writes to state that outlives the call.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Iterator, Mapping

from .._redact import is_secret_name
from . import _capability_routes as routes
from . import _capability_shapes as shapes
from ._rails import _ESCAPE_HATCHES as ESCAPE_HATCHES
from ._scopes import MISSING, bindings, own_nodes, reached
from ._vocabulary import (
    BUILTIN_REACH,
    DUNDER_OK,
    IN_PLACE,
    MUTATING_METHODS,
    PURE_MODULES,
    REFLECTION,
    WORLD_ATTRIBUTES,
    module_name,
    origin_of,
    pure_builtin,
    pure_chain,
    pure_value,
    world,
)


@dataclasses.dataclass(frozen=True)
class Use:
    """One thing a function's source uses: ``key`` is compared with the original's, ``reason`` is
    what the verdict says when it is refused (``None``: it is in the pure vocabulary)."""

    key: str
    reason: str | None


def capability_reasons(original: str, candidate: str, namespace: Mapping[str, object],
                       own: Iterable[str] = ()) -> list[str]:
    """Why ``candidate`` is refused: each thing it uses that the original does not and that is not
    pure, as ``"capability: <rule>"``. Empty: it adds nothing that could tell the sandbox from the host.

    ``namespace`` is the module's globals (what a free name is); ``own`` the names a candidate may
    read though the original did not: the function's own name (recursion) and its class's.
    """
    try:
        had = list(uses(original, namespace, own))
        added = list(uses(candidate, namespace, own))
    except SyntaxError:
        return []  # the rails say so, with the line
    except (RecursionError, MemoryError):
        return ["capability: the source is nested too deeply to judge"]
    keys = {use.key for use in had}
    chains = [use.key.removeprefix("chain:") for use in had if use.key.startswith("chain:")]
    imported = sorted(key.removeprefix("import:") for key in keys if key.startswith("import:"))
    reasons: list[str] = []
    for use in added:
        if use.reason is None or use.key in keys or reached(use.key, chains):
            continue
        reason = use.reason.replace("{imports}", ", ".join(imported) if imported else "none")
        reasons.append(f"capability: {reason}")
    return list(dict.fromkeys(reasons))


def uses(source: str, namespace: Mapping[str, object], own: Iterable[str] = ()) -> Iterator[Use]:
    """Everything ``source`` (one ``def``) uses that the capability check judges."""
    visitor = _Uses(namespace, frozenset(own))
    visitor.visit(ast.parse(source))
    yield from visitor.found
    for name in visitor.module_names:  # a module the function reads from its globals counts as imported
        yield Use(f"import:{name}", None)


@dataclasses.dataclass
class _Scope:
    bound: set[str]
    is_class: bool = False


class _Uses(ast.NodeVisitor):
    def __init__(self, namespace: Mapping[str, object], own: frozenset[str]) -> None:
        self.namespace = namespace
        self.own = own
        self.scopes: list[_Scope] = []
        self.aliases: dict[str, str] = {}  # names bound by the function's own imports -> dotted module path
        self.found: list[Use] = []
        self.module_names: set[str] = set()
        self._called: ast.expr | None = None  # the ``.format`` attribute of the call being judged
        self.values: dict[str, list[ast.expr]] = {}  # what each local is bound to (see local_values)
        self.methods: set[str] = set()  # the methods of its classes (and its functions: shapes.outermost)
        self.instance: str | None = None  # a method's self: its private attributes (not ``K._convert_``) are its own
        self.bases: set[int] = set()  # the nodes a class derives from (read there, not passed as a value)
        self.callees: set[int] = set()  # the nodes called (an attribute called is not one passed as a value)
        self.enums: set[str] = set()  # its own enum classes; whether it names random.Random (see routes):
        self.randomness = False

    def add(self, key: str, reason: str | None) -> None:
        self.found.append(Use(key, reason))

    def adds(self, found: Iterable[tuple[str, str]]) -> None:
        self.found.extend(Use(key, reason) for key, reason in found)

    # -- scopes ------------------------------------------------------------------------------

    def local(self, name: str) -> bool:
        """Bound in the function (or a scope nested in it) rather than read from the module's globals."""
        for depth, scope in enumerate(reversed(self.scopes)):
            if scope.is_class and depth:
                continue  # a class body's names are not visible in the functions defined in it
            if name in scope.bound:
                return True
        return False

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]
        if not self.scopes:
            # The outermost definition: its decorators are dropped and its annotations never evaluated
            # (see Target.compile), but its defaults are evaluated once, at install, in your process.
            self.adds(shapes.outermost(self, node))
        else:
            self.callees.update(id(decorator) for decorator in node.decorator_list)
            for expr in [*node.decorator_list, *args.defaults, *filter(None, args.kw_defaults), node.returns,
                         *(a.annotation for a in every)]:
                if expr is not None:
                    self.visit(expr)
        declared = {name for stmt in own_nodes(node.body) if isinstance(stmt, ast.Global) for name in stmt.names}
        self.scopes.append(_Scope({a.arg for a in every} | (bindings(node.body) - declared)))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for expr in [*node.args.defaults, *filter(None, node.args.kw_defaults)]:
            self.visit(expr)
        every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
        walrus = {n.target.id for n in ast.walk(node.body) if isinstance(n, ast.NamedExpr)}  # bound in the lambda
        self.scopes.append(_Scope({a.arg for a in every if a is not None} | walrus))
        self.visit(node.body)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.callees.update(id(decorator) for decorator in node.decorator_list)  # called with the class
        self.bases.update(id(base) for base in node.bases)
        self.adds([*shapes.class_body(node), *routes.class_bases(self, node)])
        for attr in routes.match_args(node):  # what its class patterns read: judged as attributes read
            self._attribute_name(attr)
            self._world(attr)
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        self.scopes.append(_Scope(bindings(node.body), is_class=True))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        first, *rest = node.generators
        self.visit(first.iter)  # evaluated in the enclosing scope
        targets = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        self.scopes.append(_Scope(targets))
        for gen in node.generators:
            self.visit(gen.target)
            for expr in [*gen.ifs, *([gen.iter] if gen is not first else [])]:
                self.visit(expr)
        for expr in [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]:
            self.visit(expr)
        self.scopes.pop()
        del rest

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name) and self.local(node.target.id) and shapes.shared(self, node.target):
            self.add(f"write:{node.target.id}", f"augmented assignment on what {node.target.id} holds (in place)")
        elif not isinstance(node.target, ast.Name):  # ``box[0] += [x]``: the item changes in place, then is stored
            self._write(node.target, "augmented assignment on {owner}")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.add(f"global-statement:{name}", f"global statement writes {name}")

    # -- imports -----------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.partition(".")[0]
            self.aliases[alias.asname or top] = alias.name if alias.asname else top
            self._import(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        self._import(module, [alias.name for alias in node.names])
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _import(self, module: str, names: Iterable[str] = ()) -> None:
        chains = [f"{module}.{name}" for name in names]
        pure = module in PURE_MODULES or (bool(chains) and all(pure_chain(chain) is None for chain in chains))
        self.add(f"import:{module}", None if pure else f"new import of {module} (the original imports {{imports}})")

    # -- names and attributes ----------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._name(node.id, bare=True)
            self.adds(routes.value_reflection(self, node))

    def _name(self, name: str, bare: bool) -> None:
        """A name read; ``bare``: as a value, not as the start of an attribute chain."""
        if self.local(name):
            if name in self.aliases and bare:
                self._chain(self.aliases[name])
                if shapes.is_module_alias(name, self.aliases[name]):
                    self._module_value(self.aliases[name])
            return
        if name in REFLECTION and bare and name not in self.namespace:
            self.add(f"reflect:{name}", f"reflection with a computed name ({name} passed as a value)")
        value = self.namespace.get(name, MISSING)
        module = module_name(value)
        if module is not None:
            self.module_names.add(module)
            if bare:
                self._chain(module)
                self._module_value(module)
        self.add(f"global:{name}", None if self._pure_global(name, value) else self._global_reason(name, value))

    def _module_value(self, module: str) -> None:
        """A module held as a value (assigned, passed, matched): what is reached through it is not followed."""
        self.add(f"module-value:{module}", f"the module {module} used as a value (what it reaches goes unchecked)")

    def _pure_global(self, name: str, value: object) -> bool:
        if name in self.own:
            return True
        if value is MISSING:
            return pure_builtin(name)
        # A secret differs in the sandbox (it is redacted there); the module's dunders say where it lives.
        return pure_value(value) and not is_secret_name(name) and not name.startswith("__")

    def _global_reason(self, name: str, value: object) -> str:
        if value is MISSING and name in BUILTIN_REACH:
            return f"{BUILTIN_REACH[name]} {name}"
        reason = f"new global name {name} not used by the original"
        module = module_name(value)
        if module is not None:
            return f"{reason} (the module {module}: {world(module)})"
        found = origin_of(value)
        if found is not None and world(".".join(found)) != "module":
            return f"{reason} ({world('.'.join(found))} {'.'.join(found)})"
        return reason

    def _chain(self, dotted: str) -> None:
        found = pure_chain(dotted)
        if found is None:
            self.add(f"chain:{dotted}", None)
        elif found == "module-valued":
            parent, _, name = dotted.rpartition(".")
            self.add(f"chain:{dotted}", f"the module {name}, reached through {parent} ({dotted})")
        elif found == "module":
            self.add(f"chain:{dotted}", f"{dotted} not used by the original")
        else:
            self.add(f"chain:{dotted}", f"{found} {dotted}")

    def module_path(self, node: ast.expr) -> str | None:
        """The dotted module path an expression names (``o.path`` after ``import os as o``), if any."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.aliases.get(node.id) if self.local(node.id) else module_name(self.namespace.get(node.id))
        return ".".join([base, *reversed(parts)]) if base is not None else None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._attribute_name(node.attr, mine=routes.own_attribute(self, node))
        self.adds([*shapes.attribute_shapes(self, node), *routes.value_reflection(self, node)])
        if node is not self._called:  # ``.format`` called is judged by its template (see visit_Call)
            self._format_value(node.attr)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._write(node.value, f"attribute write on {{owner}} ({node.attr})")
        elif node.attr in MUTATING_METHODS:
            self._write(node.value, f"mutating call {node.attr} on {{owner}}")
        dotted = self.module_path(node)
        if dotted is not None:
            self._chain(dotted)
            base: ast.expr = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                self._name(base.id, bare=False)
            return
        self._world(node.attr)
        self.visit(node.value)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in shapes.match_class(self, node):  # ``case object(inspect=…)`` reads ``.inspect``: judged as such
            self._attribute_name(attr)
            self._world(attr)
        self.generic_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.adds(shapes.match_keys(node))
        self.generic_visit(node)

    def _attribute_name(self, attr: str, mine: bool = False) -> None:
        if attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_OK:
            self.add(f"dunder:{attr}", f"dunder attribute {attr}")
        elif attr in ESCAPE_HATCHES:  # frames, tracebacks, code: however spelled (a pattern, attrgetter, getattr)
            self.add(f"hatch:{attr}", f"the interpreter's internals .{attr}")
        elif attr.startswith("_") and attr != "_" and not attr.endswith("__") and not (mine and attr[-1] != "_"):
            self.add(f"private:{attr}", f"the private attribute .{attr} not used by the original")

    def named(self, attr: str) -> None:
        """An attribute named in a string (``getattr(x, "name")``, ``attrgetter("name")``): judged as ``x.name``,
        and ``format`` so named is ``str.format`` passed as a value."""
        self._attribute_name(attr)
        self._format_value(attr)
        if attr == "__init__":
            self.add(*shapes.EXPLICIT_INIT)

    def _format_value(self, attr: str) -> None:
        """``str.format`` taken as a value (not called where it is read): its template goes unseen."""
        if attr in ("format", "format_map"):
            self.add("format:value", f"str.{attr} passed as a value (it reads the attributes its template names)")

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and shapes.DUNDER_TEXT.search(node.value):
            self.add(f"dunder-text:{node.value}", f"a dunder name in a text ({node.value[:40]!r}): str.format, a "
                                                  f"class namespace and getattr read it")

    def visit_Expr(self, node: ast.Expr) -> None:
        if not isinstance(node.value, ast.Constant):  # a docstring, or a text as a statement: never read
            self.visit(node.value)

    def _world(self, attr: str) -> None:
        if attr in WORLD_ATTRIBUTES:
            self.add(f"attr:{attr}", f"{WORLD_ATTRIBUTES[attr]} .{attr}")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) or routes.adds_on_read(self, node.value):
            self._write(node.value, "item write on {owner}")
        self.generic_visit(node)

    def _write(self, receiver: ast.expr, reason: str) -> None:
        """A write to ``receiver``: refused where it is state that outlives the call."""
        owner = self.owner(receiver)
        if owner is not None:
            self.add(f"write:{owner}", reason.replace("{owner}", owner))

    def owner(self, node: ast.expr) -> str | None:
        """What object ``node`` is, when a write to it is refused (see :func:`shapes.owner`)."""
        return shapes.owner(self, node)

    # -- calls -------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self.callees.add(id(func))
        if isinstance(func, ast.Name) and func.id in REFLECTION and not self.local(func.id) \
                and func.id not in self.namespace:
            shapes.reflection(self, node, func.id)
            for expr in [*node.args, *(k.value for k in node.keywords)]:
                self.visit(expr)
            return
        dotted = self.module_path(func) or (self.aliases.get(func.id) if isinstance(func, ast.Name) else None)
        for given in [*node.args, *(k.value for k in node.keywords)] if dotted in IN_PLACE else ():
            self._write(given, f"{dotted} on {{owner}}")  # (by position or by keyword: ``insort(a=RATES, x=…)``)
        self.adds([*routes.call_shapes(self, node, dotted), *routes.enum_call(self, node)])
        made = shapes.made_class(self, node, dotted)
        if made is not None:
            self.add(f"class-made:{made}", f"a class made by {made} (its namespace binds what it likes)")
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in ("list", "dict", "set", "bytearray", "object") \
                    and not self.local(func.value.id) and node.args and func.attr != "fromkeys":
                self._write(node.args[0], f"{func.value.id}.{func.attr} on {{owner}}")
            if func.attr in ("format", "format_map"):
                shapes.format_template(self, func.value)
                self._called = func
        self.generic_visit(node)

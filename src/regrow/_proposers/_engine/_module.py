"""What the target's module offers beside the function: sibling functions and classes, constants, literals.

Bugs often name the wrong one of several similar module-level helpers (``_padleft`` for ``_padboth``)
or write a literal where a module constant was meant; the operators of :mod:`._values` and :mod:`._calls`
draw on this. A bug that dropped a piece of a function often leaves it written in a near-copy of the
function (:mod:`._twins` reads what the module's functions write around their expressions), or leaves a
marker the module tests for passed nowhere (:func:`_sentinels`).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import linecache
import types
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..._target._target import Target

Literal = int | float | str
_MAX_SOURCE = 400_000  # characters of module source read for literals; larger modules are skipped
_MAX_LITERALS = 12
_MAX_ATTRIBUTES = 200
_MAX_KEYWORDS = 6  # keyword arguments kept per callee name


class Deferring:
    """A dataclass some of whose fields may be worked out on first read (see :func:`defer`)."""

    def resolve(self, *names: str) -> None:
        """Work out the deferred fields ``names`` now (every one left when none is named): before a fork, so
        that the children inherit them instead of each working them out again."""
        for name in names or tuple(self.__dict__.get("_later", ())):
            getattr(self, name)

    if not TYPE_CHECKING:  # (hidden from mypy, which would take any misspelt attribute for a deferred one)

        def __getattr__(self, name: str) -> Any:
            """A field :func:`defer` left, worked out now (with the others of its group)."""
            later = self.__dict__.get("_later", {})
            if name not in later:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            names, compute = later[name]
            values = compute()
            for each in names:
                later.pop(each, None)
                self.__dict__[each] = values[each]
            return values[name]


@dataclasses.dataclass
class Module(Deferring):
    """Facts about the module a function lives in; empty where it is not known."""

    functions: list[str] = dataclasses.field(default_factory=list)  # defined in the module, in order
    classes: list[str] = dataclasses.field(default_factory=list)  # defined in the module, in order
    exceptions: list[str] = dataclasses.field(default_factory=list)  # those classes that are exceptions
    constants: dict[str, Literal] = dataclasses.field(default_factory=dict)  # UPPER_CASE names bound to literals
    # written in the module: the most frequent first, then every other string, separators (is_separator) first
    literals: list[Literal] = dataclasses.field(default_factory=list)
    attributes: list[str] = dataclasses.field(default_factory=list)  # ``x.name`` written in the module, most first
    members: list[str] = dataclasses.field(default_factory=list)  # data of the method's own class (``self.name``)
    methods: list[str] = dataclasses.field(default_factory=list)  # methods of the method's own class
    unary: list[str] = dataclasses.field(default_factory=list)  # those of them that take one argument
    keywords: dict[str, list[ast.keyword]] = dataclasses.field(default_factory=dict)  # by callee, most first
    bare_calls: list[str] = dataclasses.field(default_factory=list)  # methods called without arguments, most first
    arity: dict[str, int] = dataclasses.field(default_factory=dict)  # positional parameters of module functions
    namespace: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)  # its globals
    # Expressions of the module by the key of a part of theirs (see :func:`context_keys`): what the module
    # writes around an expression like one of the function's, with the function that writes it.
    contexts: dict[str, list[Context]] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    sentinels: list[str] = dataclasses.field(default_factory=list)  # markers compared against, never passed
    # The statements each function of the module writes (``ast.dump`` of each), by ``id`` of its node.
    statements: dict[int, frozenset[str]] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, target: Target) -> Module:
        """The module of ``target``: its globals for names, its source file for literals and calls.

        What is read from the source (literals, calls, members, contexts, sentinels) is worked out on
        first read, each group when an operator first asks for it: parsing and walking a long module
        is most of what planning costs before the first edit, and the first edits need little of it."""
        namespace = target.func.__globals__
        text = "".join(linecache.getlines(target.filename))  # read now: the file as it is when the search starts
        owner = _owner(namespace, target.qualname)
        made = cls(*_definitions(namespace, target.module, target.name), _constants(namespace),
                   arity=_arity(namespace, target.module), namespace=namespace)
        tree = functools.cache(lambda: _tree(text))

        def members() -> dict[str, Any]:
            members, methods = _members(owner, tree())
            return {"members": members, "methods": methods, "unary": _unary(owner, methods)}

        defer(made, ("literals",), lambda: {"literals": _literals(tree())})
        defer(made, ("attributes", "keywords", "bare_calls"),
              lambda: dict(zip(("attributes", "keywords", "bare_calls"), _usage(tree()), strict=True)))
        defer(made, ("members", "methods", "unary"), members)
        defer(made, ("sentinels",), lambda: {"sentinels": _sentinels(tree())})
        defer(made, ("contexts", "statements"), lambda: _contexts(tree()))
        return made


# What the operators read of the module: worked out before the judging children fork, so that each inherits
# it. (The twins' facts, which only the second tier reads, were left for later: but the neighbourhood of a
# find goes on into that tier in most repairs, and then the host and every judging child each worked them
# out, ~30 ms on a 900-line module, a sixth of a typical search.)
BEFORE_FORK = ("literals", "keywords", "members", "sentinels", "contexts")


def defer(made: Deferring, names: tuple[str, ...], compute: Callable[[], dict[str, Any]]) -> None:
    """Leave ``made``'s fields ``names`` to ``compute`` (which gives each), on the first read of any of them."""
    later = made.__dict__.setdefault("_later", {})
    for name in names:
        assert not hasattr(type(made), name), f"{name} has a default on the class: reading it would not defer"
        del made.__dict__[name]
        later[name] = (names, compute)


@dataclasses.dataclass(frozen=True)
class Context:
    """An expression ``outer`` of the module that holds ``part`` as a direct child, in ``function``."""

    outer: ast.expr
    part: ast.expr
    function: ast.FunctionDef | ast.AsyncFunctionDef


_MAX_CONTEXTS = 4000  # expressions kept as contexts in one module
_SKELETON_NODES = 5  # a part this large is matched by its shape (names and values left out), a smaller one as written


def context_keys(node: ast.expr) -> list[str]:
    """How a part is looked up: as written, and (when large enough) by its shape alone."""
    keys = ["=" + ast.dump(node)]
    nodes = [n for n in ast.walk(node) if not isinstance(n, (ast.expr_context, ast.operator, ast.cmpop))]
    if len(nodes) >= _SKELETON_NODES:
        keys.append("~" + _shape(node))
    return keys


def _sentinels(tree: ast.Module | None) -> list[str]:
    """Module-level names bound to a bare ``object()`` that the module reads only in ``is`` tests
    (``a[0] is _MARK``): a marker that nothing passes any more, whose one pass a bug may have dropped.
    A marker also read as a default, an argument or a value is in use (``default=_MISSING``)."""
    if tree is None:
        return []
    made = [t.id for stmt in tree.body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "object" and not stmt.value.args
            and not stmt.value.keywords for t in stmt.targets if isinstance(t, ast.Name)]
    if not made:
        return []
    tested: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name) and child.id in made and isinstance(child.ctx, ast.Load):
                is_test = isinstance(node, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
                (tested if is_test else used).add(child.id)
    return [name for name in made if name in tested and name not in used]


def _shape(node: ast.AST) -> str:
    """``node`` written with its names, attribute names and values left out (a value's type kept)."""
    if isinstance(node, ast.Name):
        return "Name"
    if isinstance(node, ast.Constant):
        return f"Constant:{type(node.value).__name__}"
    parts = []
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            parts.append("[" + ",".join(_shape(v) if isinstance(v, ast.AST) else repr(v) for v in value) + "]")
        elif isinstance(value, ast.AST):
            parts.append(_shape(value))
        elif field != "attr":
            parts.append(repr(value))
    return f"{type(node).__name__}({','.join(parts)})"


def _parts(node: ast.expr) -> list[ast.expr]:
    """The children of ``node`` that a twin may hold in its place: a callee or an argument of a call, an
    operand of arithmetic, the value subscripted."""
    if isinstance(node, ast.Call):
        return [node.func, *(a for a in node.args if not isinstance(a, ast.Starred))]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Subscript):
        return [node.value]
    return []


def _contexts(tree: ast.Module | None) -> dict[str, Any]:
    """The module's expressions by the keys of their parts, and each function's statements."""
    found: dict[str, list[Context]] = {}
    statements: dict[int, frozenset[str]] = {}
    count = 0
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] if tree else []
    for function in functions:
        nodes = own_nodes(function)
        statements[id(function)] = statement_keys(nodes)
        for node in (n for n in nodes if isinstance(n, ast.expr) and count < _MAX_CONTEXTS):
            for part in _parts(node):
                count += 1
                for key in context_keys(part):
                    found.setdefault(key, []).append(Context(node, part, function))
    return {"contexts": found, "statements": statements}


def statement_keys(nodes: list[ast.AST]) -> frozenset[str]:
    """The simple statements among ``nodes`` (those holding no statement), as ``ast.dump`` writes them: what
    two near-copies of a function share. (A compound statement's dump holds its whole body again: leaving
    those out took the twins' facts of a 1,600-line module from ~47 to ~37 ms.)"""
    return frozenset(ast.dump(n) for n in nodes if isinstance(n, ast.stmt) and not hasattr(n, "body"))


def own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, those of the functions, lambdas and classes nested in it left out."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    nodes, stack = [], list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, nested):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _definitions(namespace: dict[str, Any], module: str, own: str) -> tuple[list[str], list[str], list[str]]:
    functions, classes, exceptions = [], [], []
    for name, value in list(namespace.items()):
        try:
            home = getattr(value, "__module__", None)  # a proxy may raise anything here
        except Exception:
            continue
        if name.startswith("__") or name == own or home != module:
            continue
        if isinstance(value, types.FunctionType):
            functions.append(name)
        elif isinstance(value, type):
            classes.append(name)
            if issubclass(value, BaseException):
                exceptions.append(name)
    return functions, classes, exceptions


def _constants(namespace: dict[str, Any]) -> dict[str, Literal]:
    return {name: value for name, value in namespace.items()
            if name.isupper() and not name.startswith("_") and type(value) in (int, float, str)}


def _tree(text: str) -> ast.Module | None:
    if not text or len(text) > _MAX_SOURCE:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _literals(tree: ast.Module | None) -> list[Literal]:
    """Numbers and strings written in the module's source (docstrings left out), most frequent first."""
    if tree is None:
        return []
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    docstrings |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    counts: Counter[tuple[type, Literal]] = Counter()
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) and id(node) not in docstrings else None
        if isinstance(value, (int, float, str)) and not isinstance(value, bool) and len(str(value)) <= 40:
            counts[type(value), value] += 1
    common = [value for (_, value), _ in counts.most_common()]
    rest = [v for v in common[_MAX_LITERALS:] if isinstance(v, str)]
    return [*common[:_MAX_LITERALS], *(v for v in rest if is_separator(v)), *(v for v in rest if not is_separator(v))]


def is_separator(value: object) -> bool:
    """A short string of punctuation: ``&``, ``;``, ``?``, ``-``, ``//``: the literals that stand between
    parts of a text, and that a bug writes for each other."""
    return isinstance(value, str) and 0 < len(value) <= 3 and not any(c.isalnum() or c.isspace() for c in value)


def _usage(tree: ast.Module | None) -> tuple[list[str], dict[str, list[ast.keyword]], list[str]]:
    """The attribute names the module reads, the keyword arguments of its calls by callee name (those
    whose value is a name or a literal), and the methods it calls without arguments, most frequent first: a
    call that lost a keyword argument (``iteritems()`` for ``iteritems(multi=True)``) or a value that lost its
    call (``word`` for ``word.lower()``) is usually written in full elsewhere in the same module."""
    if tree is None:
        return [], {}, []
    attributes: Counter[str] = Counter()
    bare: Counter[str] = Counter()
    keywords: dict[str, Counter[str]] = {}
    nodes: dict[str, ast.keyword] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not node.attr.startswith("__"):
            attributes[node.attr] += 1
        elif isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if isinstance(node.func, ast.Attribute) and not node.args and not node.keywords:
                bare[callee] += 1
            for kw in node.keywords:
                if kw.arg is not None and isinstance(kw.value, (ast.Constant, ast.Name)) and callee:
                    key = f"{callee}:{kw.arg}={ast.dump(kw.value)}"
                    keywords.setdefault(callee, Counter())[key] += 1
                    nodes.setdefault(key, kw)
    by_callee = {callee: [nodes[k] for k, _ in counts.most_common(_MAX_KEYWORDS)]
                 for callee, counts in keywords.items()}
    return ([name for name, _ in attributes.most_common(_MAX_ATTRIBUTES)], by_callee,
            [name for name, _ in bare.most_common(_MAX_ATTRIBUTES)])


def _owner(namespace: dict[str, Any], qualname: str) -> type | None:
    """The class a method is defined in, found by its qualified name in the module's globals."""
    parts = qualname.split(".")[:-1]
    if not parts or "<locals>" in parts:
        return None
    owner: Any = namespace.get(parts[0])
    for part in parts[1:]:
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) else None


def _members(owner: type | None, tree: ast.Module | None) -> tuple[list[str], list[str]]:
    """What ``self.`` may name in a method of ``owner`` (dunders left out): its data — the instance
    attributes its methods assign, the class's other attributes, properties included — and its methods
    (its own and its bases' from the same module)."""
    if owner is None:
        return [], []
    names: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == owner.__name__:
            names += [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                      and isinstance(n.value, ast.Name) and n.value.id == "self"]
    own = [(name, value) for klass in owner.__mro__ if klass.__module__ == owner.__module__
           for name, value in vars(klass).items()]
    mangled = f"_{owner.__name__.lstrip('_')}__"  # ``__size`` is found as written, in the source

    def kept(found: list[str]) -> list[str]:
        return [name for name in dict.fromkeys(found) if not (name.startswith("__") and name.endswith("__"))
                and not name.startswith(mangled)]

    methods = kept([name for name, value in own if callable(value) or isinstance(value, (classmethod, staticmethod))])
    return [name for name in kept([*names, *(name for name, _ in own)]) if name not in methods], methods


def _unary(owner: type | None, methods: list[str]) -> list[str]:
    """The methods of ``owner`` (plain functions) that can be called with one argument besides ``self``."""
    found = []
    for name in methods if owner is not None else []:
        value = inspect.getattr_static(owner, name, None)
        if not isinstance(value, types.FunctionType):
            continue
        code = value.__code__
        required = code.co_argcount - len(value.__defaults__ or ())
        if code.co_argcount >= 2 and required <= 2 and code.co_kwonlyargcount <= len(value.__kwdefaults__ or {}):
            found.append(name)
    return found


def _arity(namespace: dict[str, Any], module: str) -> dict[str, int]:
    """How many positional arguments each function of the module takes (any number: a large count)."""
    found = {}
    for name, value in list(namespace.items()):
        code = getattr(value, "__code__", None) if isinstance(value, types.FunctionType) else None
        if code is not None and getattr(value, "__module__", None) == module:
            found[name] = 99 if code.co_flags & inspect.CO_VARARGS else code.co_argcount
    return found

"""Tier 1, value edits: a sign, a constant for another constant, a name from the module for another.

Each is one token of the fix a reviewer would write: ``-x`` for ``x`` (never ``abs``), ``% 100`` for
``% 10``, ``len(xs)`` for ``0``, ``_padboth`` for ``_padleft``, ``DEFAULT_PORT`` for ``80``.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence

from ._core import _constant_edits, _identity
from ._edits import Operator, Replacement, call, is_value, load
from ._module import is_separator
from ._scope import Scope, Site

_MAX_DONORS = 6  # constants of the function and the module tried at one literal
_MAX_ALIKE = 4  # strings of the module alike the one at a literal, tried besides
_MAX_SEPARATORS = 16  # separators tried at a separator: a module writes few, and any may be the one
_MAX_NAMES = 8  # module names tried at one name
# Builtins of one kind, which one bug may write for another (callees are SiblingSwap's).
_KINDS: Sequence[Sequence[str]] = (
    ("ValueError", "TypeError", "KeyError", "IndexError", "LookupError", "AttributeError", "ZeroDivisionError",
     "ArithmeticError", "OverflowError", "RuntimeError", "NotImplementedError", "StopIteration", "OSError",
     "FileNotFoundError", "UnicodeError", "Exception"),
    ("int", "float", "str", "bool", "bytes", "list", "tuple", "set", "frozenset", "dict"),
    ("len", "abs", "str", "int", "float", "ord", "repr", "bool", "sorted", "reversed", "sum", "min", "max"),
)
# The values some standard functions return, a closed set: a literal compared with what one returned (or with
# its first letter, ``category(c)[0] == "L"``) may be a slip for another of them, one the code never writes.
_DOMAINS: dict[str, tuple[str, ...]] = {
    "category": ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
                 "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"),
    "bidirectional": ("L", "R", "AL", "EN", "ES", "ET", "AN", "CS", "NSM", "BN", "B", "S", "WS", "ON", "LRE", "LRO",
                      "RLE", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"),
    "east_asian_width": ("F", "H", "W", "Na", "A", "N"),
}


class UnaryMinus:
    """``-x`` → ``x`` and ``x`` → ``-x`` for a value: returned, assigned, compared, an argument or an element."""

    name, tier, prior = "sign", 1, 2

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            yield node.operand
        elif isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp)) and _signable(site) \
                and not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))):
            yield ast.UnaryOp(ast.USub(), node)  # ``-(a * b)`` is ``-a * b``, made at ``a``


def _signable(site: Site) -> bool:
    if isinstance(getattr(site.node, "ctx", None), (ast.Store, ast.Del)) or isinstance(site.parent, ast.UnaryOp):
        return False
    if site.field == "func" or (isinstance(site.node, ast.Call) and _is_named(site.node, "abs")):
        return False
    parent = site.parent
    return is_value(site) or (isinstance(parent, (ast.Tuple, ast.List)) and site.field == "elts") or (
        isinstance(parent, ast.Call) and site.field == "args" and not _is_named(parent, "range")) or (
        isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div, ast.FloorDiv)))


def _is_named(node: ast.Call, name: str) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == name


class ConstantSwap:
    """A literal replaced by another literal of the function or the module, by a scale change (``10`` ↔
    ``100``), by its negation, by another value of the standard function it is compared with
    (``category(c)[0] == "M"`` for ``"L"``), or ``0`` ↔ ``len(xs)``."""

    name, tier, prior = "constant-swap", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(node, ast.Call) and _is_named(node, "len") and len(node.args) == 1 and is_value(site):
            yield ast.Constant(0)
            return
        if not isinstance(node, ast.Constant) or isinstance(site.parent, ast.JoinedStr):
            return
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or _is_docstring(site):
            return
        op = getattr(site.parent, "op", None) if site.field in ("right", "value") else None
        done = {ast.dump(c) for c in [*_constant_edits(value), ast.Constant(value)]}  # ConstantTweak's, and itself
        for new in [*_donors(value, scope), *_scaled(value, site), *_domain(value, site)]:
            if ast.dump(new) in done or (op is not None and isinstance(new, ast.Constant) and _identity(type(op), new)):
                continue
            done.add(ast.dump(new))
            yield new
        if type(value) is int and value == 0:
            for seq in scope.sequences[:3]:
                yield call("len", load(seq))


def _domain(value: int | float | str, site: Site) -> Iterator[ast.expr]:
    """The other values of the standard function a string literal is compared with (:data:`_DOMAINS`):
    ``unicodedata.category(c)[0] == "L"`` → ``"M"``, ``"N"``, …; ``bidirectional(c) == "R"`` → ``"AL"``, …"""
    compare = site.parent
    if not isinstance(value, str) or not isinstance(compare, ast.Compare):
        return
    for side in [compare.left, *compare.comparators]:
        first = isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Constant) and side.slice.value == 0
        called = side.value if isinstance(side, ast.Subscript) and first else side
        if not isinstance(called, ast.Call):
            continue
        func = called.func
        name = func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
            func.value.id == "unicodedata" else func.id if isinstance(func, ast.Name) else ""
        domain = _DOMAINS.get(name, ())
        values = dict.fromkeys(code[0] for code in domain) if first else dict.fromkeys(domain)
        if value in values:
            for other in values:
                if other != value:
                    yield ast.Constant(other)
            return


def _is_docstring(site: Site) -> bool:
    return isinstance(site.parent, ast.Expr)


def _donors(value: int | float | str, scope: Scope) -> Iterator[ast.expr]:
    """Other literals of the same type (and of the same shape, for a separator): the function's own first,
    then the module's most frequent."""
    named = set(scope.module.constants.values())  # those come by name (ModuleName): ``DEFAULT_PORT``, not ``8080``
    module = [v for v in scope.module.literals if v not in named]
    same = [v for v in [*scope.constants, *module] if type(v) is type(value) and v != value]
    if isinstance(value, str) and is_separator(value):  # for another separator: ``"&"`` for ``"?"``, not ``"utf8"``
        marks = set(value)
        same = sorted((v for v in same if is_separator(v)),  # sharing a mark first, then as long
                      key=lambda v: (-len(set(str(v)) & marks), abs(len(str(v)) - len(value))))
    elif isinstance(value, str):
        same = [v for v in same if not is_separator(v)]  # nor ``"&"`` for ``"utf8"``
    own = list(dict.fromkeys(same))[:_MAX_SEPARATORS if is_separator(value) else _MAX_DONORS]
    if isinstance(value, str) and not is_separator(value):
        own += [v for v in _alike_strings(value, [v for v in same if isinstance(v, str)]) if v not in own][:_MAX_ALIKE]
    for other in own:
        yield _literal(other)


def _alike_strings(value: str, strings: Sequence[str]) -> list[str]:
    """Strings of the module that read like ``value``, the most alike first: a code of the same family
    (``"bidi_rule_5"`` → ``"bidi_rule_2"``, ``"hyphen_3_4"`` → ``"hyphen_start_end"``), which a bug writes
    for its sibling. Alike: a common prefix or suffix of three characters or more, or the same shape
    (runs of letters, digits and other characters) where ``value`` is a word of its own."""
    def common(a: str, b: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    def shape(text: str) -> str:
        kinds = ["a" if c.islower() else "A" if c.isupper() else "9" if c.isdigit() else c for c in text]
        return "".join(k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1])

    scored = []
    for i, other in enumerate(dict.fromkeys(strings)):
        near = max(common(value, other), common(value[::-1], other[::-1]))
        if other != value and (near >= 3 or (len(value) > 1 and shape(other) == shape(value))):
            scored.append((-(common(value, other) + common(value[::-1], other[::-1])), i, other))
    return [other for _, _, other in sorted(scored)]


def _scaled(value: int | float | str, site: Site) -> Iterator[ast.expr]:
    """``10`` ↔ ``100`` where a literal scales (a factor, a divisor, a modulus, a threshold), and ``1`` ↔ ``-1``
    where it stands alone (a sign in a sum is BinaryOp's ``+`` ↔ ``-``)."""
    if type(value) is not int or value == 0:
        return
    parent = site.parent
    scales = (isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod))) \
        or isinstance(parent, ast.Compare)
    if scales and value != 1:
        yield ast.Constant(value * 10)
        if value % 10 == 0:
            yield ast.Constant(value // 10)
    if value > 0 and not isinstance(parent, (ast.UnaryOp, ast.BinOp)):
        yield ast.UnaryOp(ast.USub(), ast.Constant(value))


def _literal(value: int | float | str) -> ast.expr:
    """A literal as the parser would make it: a negative number is a minus before a positive one."""
    if not isinstance(value, str) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


class ModuleName:
    """A name replaced by another one of the module — a sibling function, a class, a constant for a
    constant or a literal — or a builtin by one of its kind (``TypeError`` → ``ValueError``)."""

    name, tier, prior = "module-name", 1, 4

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node, module = site.node, scope.module
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, str) and not _is_docstring(site) \
                and not isinstance(site.parent, ast.JoinedStr):
            for name, value in module.constants.items():
                if type(value) is type(node.value) and value != node.value:
                    yield load(name)
            return
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in scope.variables:
            return
        for other in _kin(node.id, scope, callee=site.field == "func")[:_MAX_NAMES]:
            yield load(other)


def _kin(name: str, scope: Scope, callee: bool) -> list[str]:
    """Names of the same kind as ``name``, the module's first (most alike ``name`` first): functions,
    exceptions, classes, constants; then builtins of its kind (callees only exceptions: SiblingSwap
    has the rest), functions before types where a value is passed (``key=str`` → ``key=len``)."""
    module = scope.module
    kinds = [_KINDS[0]] if callee else [_KINDS[0], _KINDS[2], _KINDS[1]]
    builtin = [other for group in kinds if name in group for other in group]
    if name in module.exceptions or name in _KINDS[0]:
        pool = _bases_first(name, _similar(name, module.exceptions) + _similar(name, builtin), module.namespace)
    elif name in module.functions:
        pool = _similar(name, module.functions)
    elif name in module.classes:
        pool = _similar(name, module.classes)
    elif name in module.constants:
        pool = _similar(name, [c for c, v in module.constants.items() if type(v) is type(module.constants[name])])
    else:
        pool = builtin
    return [other for other in dict.fromkeys(pool) if other != name]


def _bases_first(name: str, pool: list[str], namespace: dict[str, object]) -> list[str]:
    """Exception names with each base put before its subclasses (``LookupError`` before ``KeyError``), bases
    of ``name`` itself (``Exception``) left where they are. A test sees an exception through its class
    hierarchy: where it asks for the base, every subclass passes too, but only the base is what it named;
    where it asks for a subclass, the base fails and costs one candidate."""
    def resolve(other: str) -> type | None:
        found = namespace.get(other, getattr(builtins, other, None))
        return found if isinstance(found, type) and issubclass(found, BaseException) else None

    own = resolve(name)
    ordered: list[str] = []
    for other in pool:
        klass = resolve(other)
        if klass is not None:
            ordered += [base for base in pool if base not in ordered and base != other and
                        (b := resolve(base)) is not None and issubclass(klass, b) and
                        not (own is not None and issubclass(own, b))]
        if other not in ordered:
            ordered.append(other)
    return ordered


def _similar(name: str, names: Sequence[str]) -> list[str]:
    """``names`` most alike ``name`` first (the longest common prefix and suffix), else in their order."""
    def common(a: str, b: str) -> int:
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    return sorted(names, key=lambda other: -(common(name, other) + common(name[::-1], other[::-1])))


class LostUse:
    """A value written where a variable was meant, the variable's one use lost: a variable that is
    assigned (or a parameter that is passed) but never read stands in for a literal
    (``self.size -= 1`` for ``-= itemsize`` after ``itemsize = sizes.pop(key)``); and a ``None`` for any
    parameter (``next(it, None)`` for ``next(it, default)``), those never read first. A parameter or variable
    nobody reads is the sign of such a loss; ``x is None`` is a test, and stays."""

    name, tier, prior = "lost-use", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, ast.Constant) or _is_docstring(site) or isinstance(site.parent, ast.JoinedStr) or \
                isinstance(node.value, bool) or (node.value is None and isinstance(site.parent, ast.Compare)):
            return  # a name for a name is NameSwap's
        unread = scope.unread
        for name in unread:
            yield load(name)
        if node.value is None:
            for param in scope.params:
                if param not in unread and param not in ("self", "cls"):
                    yield load(param)


class Override:
    """An optional parameter that lost its one use: a computed value ``v`` → ``v if p is None else p`` for a
    parameter ``p`` that defaults to ``None`` and is never read (``end = len(s)`` for ``end = len(s) if n is
    None else n``): the idiom of an argument that overrides a default."""

    name, tier, prior = "override", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp)) or \
                not isinstance(site.parent, (ast.Assign, ast.Return)) or site.field != "value":
            return
        for param in _optional(scope):
            if param in scope.unread:
                test = ast.Compare(load(param), [ast.Is()], [ast.Constant(None)])
                yield ast.IfExp(test, node, load(param))


def _optional(scope: Scope) -> list[str]:
    """Parameters whose default is ``None``."""
    args = scope.function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)]
    return [a.arg for a, d in pairs if isinstance(d, ast.Constant) and d.value is None]


class NextElement:
    """A literal collection of numbers that lost its last element: ``(11, 12)`` → ``(11, 12, 13)``, the
    progression continued by its own step."""

    name, tier, prior = "next-element", 2, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or isinstance(getattr(node, "ctx", None), ast.Store):
            return
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is int]
        if len(values) < 2 or len(values) != len(node.elts):
            return
        step = values[-1] - values[-2]
        elts = [*node.elts, ast.Constant(values[-1] + (step or 1))]
        yield ast.Set(elts) if isinstance(node, ast.Set) else type(node)(elts, ast.Load())


class Mirror:
    """An index counted from the wrong end: ``s[1]`` → ``s[-2]``, ``s[-1]`` → ``s[0]`` (the second largest of a sorted
    list, the last row); a slice that lost its other end: ``s[1:]`` → ``s[1:-1]`` (the inside of a text)."""

    name, tier, prior = "mirror", 1, 3

    def edits(self, site: Site, scope: Scope) -> Iterator[Replacement]:
        node = site.node
        if isinstance(site.parent, ast.Subscript) and site.field == "slice" and not isinstance(node, ast.Slice):
            value = _int(node)
            if value is not None:
                yield ast.Constant(-value - 1)
        elif isinstance(node, ast.Slice) and node.upper is None and node.step is None:
            lower = _int(node.lower) if node.lower is not None else None
            if lower is not None and lower > 0:
                yield ast.Slice(node.lower, ast.Constant(-lower), None)


def _int(node: ast.AST) -> int | None:
    """The int a literal (``2``, ``-2``) is, or ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


VALUES: list[Operator] = [UnaryMinus(), ConstantSwap(), ModuleName(), LostUse(), Override(), NextElement(), Mirror()]

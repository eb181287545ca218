"""The call and member edits (:mod:`regrow._proposers._engine._calls`) and a parameter for a ``None``: each makes the
edit a lost argument or a wrong member needs, drawn from what the module writes elsewhere."""

from __future__ import annotations

import ast
import bisect
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from regrow._proposers._engine import Operator
from regrow._proposers._engine._blocks import WrapCall
from regrow._proposers._engine._calls import (
    ArgumentAdded,
    AttributeAdded,
    KeywordFromModule,
    LookupStyle,
    MemberSwap,
    MethodAdded,
    MethodLookup,
    OwnMember,
    PositionAdded,
    SentinelPassed,
)
from regrow._proposers._engine._core import OffByOne
from regrow._proposers._engine._module import Module
from regrow._proposers._engine._scope import Scope
from regrow._proposers._engine._splice import splice
from regrow._proposers._engine._templates import AddTerm
from regrow._proposers._engine._values import LostUse, NextElement, Override
from regrow._target._target import Target


def made(op: Operator, source: str, module: Module | None = None) -> list[str]:
    """Every function ``op`` makes of ``source``, as spliced (the user's text kept)."""
    source = textwrap.dedent(source)
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    scope = Scope.of(function, module)
    return [splice(source, function, site, new) for site in scope.sites for new in op.edits(site, scope)]


def keyword(arg: str, value: object) -> ast.keyword:
    return ast.keyword(arg, ast.Constant(value))


def test_a_keyword_argument_the_module_passes_elsewhere() -> None:
    module = Module(keywords={"iteritems": [keyword("multi", True)]})
    source = "def update(self, E):\n    it = E.iteritems()\n    return list(it)\n"
    assert made(KeywordFromModule(), source, module) == [source.replace("E.iteritems()", "E.iteritems(multi=True)")]
    already = "def update(self, E):\n    return E.iteritems(multi=False)\n"
    assert made(KeywordFromModule(), already, module) == []


def test_a_lost_positional_argument_of_a_module_function() -> None:
    module = Module(functions=["lstrip"], arity={"lstrip": 2})
    source = "def strip(items, value=None):\n    return rstrip(lstrip(items), value)\n"
    assert source.replace("lstrip(items)", "lstrip(items, value)") in made(ArgumentAdded(), source, module)
    full = "def strip(items, value=None):\n    return lstrip(items, value)\n"
    assert made(ArgumentAdded(), full, module) == []  # it takes no more


def test_pop_given_the_first_position() -> None:
    source = "def take(self):\n    return self.items.pop()\n"
    assert made(PositionAdded(), source) == [source.replace("pop()", "pop(0)")]
    assert PositionAdded().tier == 1  # an off-by-one, searched with the core edits


class _Counter:
    def __init__(self) -> None:
        self._threshold = 1
        self._thresh_count = 0

    @property
    def threshold(self) -> int:
        return self._thresh_count


def test_another_member_of_the_method_s_own_class() -> None:
    module = Module.of(Target.of(_Counter.threshold.fget))  # type: ignore[attr-defined]
    assert module.members == ["_threshold", "_thresh_count", "threshold"] and module.methods == []
    source = "def threshold(self):\n    return self._thresh_count\n"
    assert made(MemberSwap(), source, module)[0] == source.replace("_thresh_count", "_threshold")


def test_an_attribute_of_a_named_module_alike_in_name() -> None:
    module = Module(namespace={"bisect": bisect})
    source = "def ceil(x, options):\n    i = bisect.bisect_right(options, x)\n    return options[i]\n"
    found = made(MemberSwap(), source, module)
    assert found[0] == source.replace("bisect_right", "bisect_left")
    assert not [text for text in found if "insort" in text and "insort_right" not in text]  # nothing unalike


class _Multi(dict):  # type: ignore[type-arg]
    def getlist(self, key: object, default: object = None) -> list[object]:
        return [self[key]] if key in self else []

    def add(self, key: object, value: object) -> None:
        self[key] = value

    def todict(self) -> dict[object, object]:
        return {k: self[k] for k in self}


class _Random:
    def __init__(self, choice: Callable[[list[int]], int]) -> None:
        self.__choice = choice

    def choose(self, items: list[int]) -> int:
        import random
        return random.choice(items)


def test_a_lookup_of_the_class_s_own_for_a_subscript() -> None:
    module = Module.of(Target.of(_Multi.todict))
    assert module.unary == ["getlist"]  # add takes two
    source = "def todict(self):\n    return {k: self[k] for k in self}\n"
    assert made(MethodLookup(), source, module) == [source.replace("self[k]", "self.getlist(k)")]
    assert made(MethodLookup(), "def f(self, d):\n    return d[1]\n", module) == []  # not self


def test_the_instance_s_own_member_for_a_value_of_the_module() -> None:
    module = Module.of(Target.of(_Random.choose))
    assert "__choice" in module.members
    source = "def choose(self, items):\n    return random.choice(items)\n"
    assert made(OwnMember(), source, module) == [source.replace("random.choice", "self.__choice")]
    assert made(OwnMember(), "def f(items):\n    return random.choice(items)\n", module) == []  # no self


def test_a_parameter_for_a_none() -> None:
    source = "def first(items, key=None, default=None):\n    return next(filter(key, items), None)\n"
    found = made(LostUse(), source)
    assert found[0] == source.replace(", None)", ", default)")  # the parameter never read comes first
    assert made(LostUse(), "def f(a):\n    return a is None\n") == []


def test_a_variable_never_read_for_a_literal() -> None:
    source = "def drop(self, key):\n    size = self.sizes.pop(key)\n    self.total -= 1\n"
    assert made(LostUse(), source) == [source.replace("-= 1", "-= size")]
    assert made(LostUse(), "def f(a):\n    b = a * 2\n    return b - 1\n") == []  # every variable is read


def test_the_module_is_read_for_calls(make_module: Callable[[str], Any]) -> None:
    mod = make_module('''
        def pairs(d, multi=False):
            return list(d.items())

        def first(d):
            return pairs(d, multi=True)[0]

        def last(d):
            return pairs(d)[-1]
    ''')
    module = Module.of(Target.of(mod.last))
    assert module.arity["pairs"] == 2 and [kw.arg for kw in module.keywords["pairs"]] == ["multi"]
    assert "items" in module.attributes


def test_a_marker_the_module_tests_for_but_never_passes(make_module: Callable[[str], Any]) -> None:
    mod = make_module('''
        _PLAIN = object()
        _MISSING = object()

        def words(*parts):
            if parts and parts[0] is _PLAIN:
                return list(parts[1:])
            return [part.upper() for part in parts]

        def get(d, key, default=_MISSING):
            return d[key] if default is _MISSING else d.get(key, default)

        def plain(*parts):
            return words(*parts)
    ''')
    module = Module.of(Target.of(mod.plain))
    assert module.sentinels == ["_PLAIN"]  # _MISSING is passed, as a default
    source = "def plain(*parts):\n    return words(*parts)\n"
    assert made(SentinelPassed(), source, module)[0] == source.replace("words(*parts)", "words(_PLAIN, *parts)")
    reads = "def plain(*parts):\n    return words(*parts) if parts[0] is _PLAIN else None\n"
    assert made(SentinelPassed(), reads, module) == []  # the function reads it already


def test_enumerate_counts_from_one() -> None:
    source = "def f(a):\n    return [(i, x) for i, x in enumerate(a)]\n"
    assert made(PositionAdded(), source) == [source.replace("enumerate(a)", "enumerate(a, 1)")]
    assert made(ArgumentAdded(), source) == []


@pytest.mark.parametrize(("op", "module", "before", "after"), [
    (MethodAdded(), Module(bare_calls=["lower", "strip"]), "    return s\n", "    return s.lower()\n"),
    (MethodAdded(), Module(bare_calls=["lower"]), "    return s in WORDS\n", "    return s.lower() in WORDS\n"),
    (AttributeAdded(), None, "    a = s\n    return a.prev\n", "    a = s.prev\n    return a.prev\n"),
    (Override(), None, "    end = len(s)\n    return s[:end]\n",
     "    end = len(s) if n is None else n\n    return s[:end]\n"),
    (NextElement(), None, "    return s % 100 in (11, 12)\n", "    return s % 100 in (11, 12, 13)\n"),
    (WrapCall(), None, "    if isinstance(s, bytes):\n        return s\n    return s\n",
     "    if isinstance(s, bytes):\n        return bytes(s)\n    return s\n"),
    (OffByOne(), None, "    return emit(s, position=n)\n", "    return emit(s, position=n + 1)\n"),
    (OffByOne(), None, "    return emit(s[0], s[-1])\n", "    return emit(s[0], s[-1] + 1)\n"),
    (OffByOne(), None, "    return s & (1 << n)\n", "    return s & (1 << n) - 1\n"),
    (AddTerm(), None, "    return Bits(s << n, s.size)\n", "    return Bits(s << n, s.size + n)\n"),
])
def test_a_lost_piece_put_back(op: Operator, module: Module | None, before: str, after: str) -> None:
    head = "def f(s, n=None):\n"
    assert head + after in made(op, head + before, module)


@pytest.mark.parametrize(("before", "after"), [
    ("    return s.get(n)\n", "    return s[n]\n"),
    ("    return s[n] or s.get(0, n)\n", "    return s.get(n) or s.get(0, n)\n")])
def test_a_lookup_that_raises_or_returns_none(before: str, after: str) -> None:
    head = "def f(s, n):\n"
    assert made(LookupStyle(), head + before) == [head + after]
    assert made(LookupStyle(), head + "    return s[1:n], s.get(n, 0)\n") == []
    assert made(LookupStyle(), head + "    return s[n]\n") == []  # no sign that ``s`` is a mapping


def test_builtins_take_no_off_by_one_argument() -> None:
    assert made(OffByOne(), "def f(s, n):\n    if isinstance(s, n):\n        return 1\n") == []


@pytest.mark.parametrize("op", [KeywordFromModule(), ArgumentAdded(), MemberSwap(), LostUse(), MethodAdded(),
                                AttributeAdded(), Override(), NextElement(), LookupStyle(), PositionAdded(),
                                MethodLookup(), OwnMember(), SentinelPassed()])
def test_nothing_without_a_site_of_its_kind(op: Operator) -> None:
    assert made(op, "def f(a, b):\n    return a + b\n") == []

"""Planning reads the module and copies of the function only when an operator asks (issue 26): the facts
are the same as when worked out up front, and nothing is parsed before the first edit needs it."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from regrow._proposers._engine import _module
from regrow._proposers._engine._module import Module
from regrow._proposers._engine._ranked import Ranked
from regrow._proposers._engine._scope import Scope
from regrow._target._target import Target, find_function

SOURCE = '''
    import os

    LIMIT = 10
    _MARK = object()


    class Box:
        def __init__(self, size):
            self.size = size
            self.label = "box"

        def grow(self, by):
            self.size = self.size + by * 2
            return self.size

        def shrink(self, by):
            return self.size - by


    def render(items, sep=", "):
        """Items joined."""
        parts = [str(item).strip() for item in items if item is not _MARK]
        total = len(parts) + LIMIT
        return sep.join(parts).lower(), os.path.join("a", "b"), total


    def render_all(items):
        parts = [str(item).strip() for item in items]
        return ", ".join(parts).upper()
'''


def eager(target: Target) -> dict[str, Any]:
    """What the module's source says, worked out at once as before the deferral."""
    tree = ast.parse(Path(target.filename).read_text())
    owner = _module._owner(target.func.__globals__, target.qualname)
    attributes, keywords, bare_calls = _module._usage(tree)
    members, methods = _module._members(owner, tree)
    return {"literals": _module._literals(tree), "attributes": attributes, "keywords": keywords,
            "bare_calls": bare_calls, "members": members, "methods": methods,
            "unary": _module._unary(owner, methods), "sentinels": _module._sentinels(tree),
            **_module._contexts(tree)}


@pytest.mark.parametrize("qualname", ["render", "Box.grow"])
def test_the_module_s_facts_are_those_worked_out_up_front(make_module: Callable[[str], Any], qualname: str) -> None:
    mod = make_module(SOURCE)
    target = Target.of(mod.Box.grow if qualname == "Box.grow" else mod.render)
    expected = eager(target)
    module = Module.of(target)
    for name, value in expected.items():
        if name == "contexts":  # nodes of another parse: compared by what they hold
            assert {key: [(ast.dump(c.outer), ast.dump(c.part), c.function.name) for c in found]
                    for key, found in module.contexts.items()} == \
                   {key: [(ast.dump(c.outer), ast.dump(c.part), c.function.name) for c in found]
                    for key, found in value.items()}
        elif name == "statements":  # keyed by the id of a node of that parse: the sets of statements
            assert sorted(map(sorted, module.statements.values())) == sorted(map(sorted, value.values()))
        elif name == "keywords":
            assert {k: [ast.dump(kw) for kw in v] for k, v in module.keywords.items()} == \
                   {k: [ast.dump(kw) for kw in v] for k, v in value.items()}
        else:
            assert getattr(module, name) == value, name
    assert module.sentinels == ["_MARK"] and "LIMIT" in module.constants
    assert module.members == (["size", "label"] if qualname == "Box.grow" else [])


def test_nothing_is_parsed_before_an_operator_asks(make_module: Callable[[str], Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = _module._tree
    monkeypatch.setattr(_module, "_tree", lambda text: parsed.append(text) or real(text))
    mod = make_module(SOURCE)
    target = Target.of(mod.render)
    module = Module.of(target)
    scope = Scope.of(find_function(target.bare_source, target.name), module)
    assert parsed == []  # planning up to the first edit: no parse of the module
    assert scope.module.functions == ["render_all"] and scope.module.arity["render_all"] == 1  # from the globals
    assert module.keywords == {}  # the first read parses it, once, for every group
    assert module.literals[:1] == [", "] and module.attributes and module.sentinels == ["_MARK"]
    assert len(parsed) == 1


def test_a_scope_s_copies_are_those_worked_out_up_front(make_module: Callable[[str], Any]) -> None:
    mod = make_module(SOURCE)
    target = Target.of(mod.render)
    scope = Scope.of(find_function(target.bare_source, target.name), Module())
    assert "expressions" not in vars(scope) and "statements" not in vars(scope)
    dumped = [ast.dump(node) for node in scope.expressions]
    assert "Name(id='parts', ctx=Load())" in dumped and len(dumped) == len(set(dumped))
    assert [type(node).__name__ for node in scope.statements] == ["Assign", "Assign", "Return"]
    assert Scope.of(scope.function, Module()) == scope  # equal once read: the same fields


def test_a_field_with_a_default_on_the_class_cannot_be_deferred() -> None:
    import dataclasses

    @dataclasses.dataclass
    class Plain(_module.Deferring):
        value: int = 0

    with pytest.raises(AssertionError, match="default on the class"):
        _module.defer(Plain(), ("value",), lambda: {"value": 1})
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        Plain().missing  # noqa: B018


def weighted_mean(values: list[float], weights: list[float]) -> float:
    total = 0.0
    for value, weight in zip(values, weights, strict=True):
        total += value * weight
    return total / len(weights)  # the bug: should divide by sum(weights)


def test_the_module_s_facts_are_worked_out_before_the_judging_children_fork() -> None:
    # The children inherit what the host worked out: none works it out again (the twins' facts included:
    # the search reaches their tier in most repairs). Without a worker nothing is worked out ahead.
    import time

    from regrow._checks._oracles import TestCallable
    from regrow._evidence._failure import check_failure
    from regrow._proposers._engine import Engine
    from regrow._proposers._engine._splice import _cache
    from regrow._proposers._proposer import Request

    def test_weighted(fn: Callable[..., float]) -> None:
        assert fn([1.0, 3.0], [3.0, 1.0]) == 1.5

    target = Target.of(weighted_mean)
    request = Request(target, check_failure("test", target.func, "failing"), [], [TestCallable(test_weighted)], 1,
                      time.monotonic() + 60)
    engine = Engine()
    with engine._worker(request) as worker:
        plan = engine.plan(request, worker)
    assert isinstance(plan.edits, Ranked)
    module = plan.edits.scope.module
    later = vars(module).get("_later", {})
    assert not later and "contexts" in vars(module) and "statements" in vars(module)
    assert "_parents" in vars(plan) and _cache[0] is not None and _cache[0].function is plan.function
    bare = engine.plan(request)  # no worker: no child to fork, nothing worked out ahead
    assert isinstance(bare.edits, Ranked)
    assert {"literals", "keywords", "contexts"} <= set(vars(bare.edits.scope.module)["_later"])

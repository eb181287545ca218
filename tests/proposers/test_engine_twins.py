"""The piece a twin kept (``regrow._proposers._engine._twins``): a function that lost part of an expression gets
it back from a near-copy of itself in the same module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from test_engine_edits import fixed

from regrow._proposers._engine._module import Module
from regrow._proposers._engine._scope import Scope
from regrow._proposers._engine._twins import TwinContext
from regrow._target._target import Target, find_function


def test_a_dropped_term_comes_back_from_a_twin(make_module: Callable[[str], Any]) -> None:
    mod = make_module('''
        def mean(values):
            if not values:
                raise ValueError("no values")
            total = sum(values)
            return total / len(values)


        def mean_square(values):
            if not values:
                raise ValueError("no values")
            total = sum(value * value for value in values)
            return total
    ''')

    def test_mean_square(fn: Callable[..., float]) -> None:
        assert fn([1, 3]) == 5
        assert fn([2]) == 4

    assert fixed(mod.mean_square, ([1, 2],), test_mean_square) == ["-return total", "+return total / len(values)"]


def test_a_dropped_call_of_a_result_comes_back_from_a_twin_of_another_shape(
        make_module: Callable[[str], Any]) -> None:
    """The twin passes other values (``1.8`` for ``1.0``): the expression is matched by its shape."""
    mod = make_module('''
        def _scaler(factor, offset, digits):
            def scale(value):
                return round(value * factor + offset, digits)
            return scale


        def to_fahrenheit(celsius):
            celsius = float(celsius)
            return _scaler(1.8, 32.0, 1)(celsius)


        def to_kelvin(celsius):
            celsius = float(celsius)
            return _scaler(1.0, 273.15, 2)
    ''')

    def test_kelvin(fn: Callable[..., Any]) -> None:
        assert fn(0) == 273.15
        assert fn("-273.15") == 0

    assert fixed(mod.to_kelvin, (1,), test_kelvin) == ["-return _scaler(1.0, 273.15, 2)",
                                                       "+return _scaler(1.0, 273.15, 2)(celsius)"]


def test_no_context_from_the_function_itself(make_module: Callable[[str], Any]) -> None:
    """The function's own expressions are no twin's, a nested function in it or not (``abs(item)`` is
    never made ``abs(len(item))``); a function that shares no statement with it is no twin either."""
    mod = make_module('''
        def sizes(item):
            def twice(value):
                return value * 2
            return twice(len(item)), abs(item)

        def unrelated(item):
            return abs(item) + 1
    ''')
    target = Target.of(mod.sizes)
    scope = Scope.of(find_function(target.bare_source, target.name), Module.of(target))
    assert [new for site in scope.sites for new in TwinContext().edits(site, scope)] == []

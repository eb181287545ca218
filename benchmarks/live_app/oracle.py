"""The oracle the benchmark's middleware gets for ``liveshop.parse.parse_qty`` (``tests=``)."""

from __future__ import annotations

from collections.abc import Callable


def test_parse_qty(fn: Callable[[str], int]) -> None:
    assert fn("12") == 12
    assert fn(" 7 ") == 7
    assert fn("1,200") == 1200
    assert fn("3 pcs") == 3
    assert fn("5PCS") == 5
    assert fn("") == 0


TESTS = {"liveshop.parse.parse_qty": [test_parse_qty]}

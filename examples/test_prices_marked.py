"""The tests of prices.py with the pytest plugin's mark: ``pytest --heal examples/test_prices_marked.py``."""

import pytest
from prices import parse_price


@pytest.mark.heal(target="prices.parse_price")  # a failure here asks for a repair of parse_price
def test_single_digit():
    assert parse_price("€5") == 5.0


def test_plain():  # passes before the fix, and must still pass after it
    assert parse_price(" 7.5 ") == 7.5

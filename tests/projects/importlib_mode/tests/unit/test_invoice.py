import pytest
from billing.invoice import total


@pytest.mark.heal(target="billing.invoice.total")
def test_one_line():
    assert total([(2, 5.0)]) == 10.0


@pytest.mark.heal(target="billing.invoice.total")
def test_discount():
    assert total([(1, 50.0)], discount=10) == 45.0

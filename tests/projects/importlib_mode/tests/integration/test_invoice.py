import pytest
from billing.invoice import total


def test_empty_invoice():
    assert total([]) == 0


@pytest.mark.heal(target="billing.invoice.total")
def test_many_lines():
    assert total([(3, 2.0), (1, 4.0), (2, 0.5)]) == 11.0

from shop.cart import total


def test_no_tax():
    assert total([1.5, 2.5], 0) == 4.0


def test_tax():
    assert total([10.0, 10.0], 10) == 22.0


def test_small_tax():
    assert total([3.0], 5) == 3.15

from programs.with_tax import with_tax


def test_no_tax():
    assert with_tax(10.0, 0) == 10.0


def test_ten_percent():
    assert with_tax(10.0, 10) == 11.0


def test_cents():
    assert with_tax(19.99, 20) == 23.99

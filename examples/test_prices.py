from prices import parse_price


def test_dollars():
    assert parse_price("$12.99") == 12.99


def test_rupees():
    assert parse_price("₹1,299") == 1299.0


def test_plain():
    assert parse_price(" 7.5 ") == 7.5


def test_single_digit():
    assert parse_price("€5") == 5.0

from programs.fast_power import fast_power


def test_zero_exponent():
    assert fast_power(2, 0) == 1


def test_one():
    assert fast_power(2, 1) == 2


def test_even():
    assert fast_power(2, 10) == 1024
    assert fast_power(5, 2) == 25


def test_odd():
    assert fast_power(3, 5) == 243
    assert fast_power(10, 3) == 1000


def test_negative_base():
    assert fast_power(-2, 3) == -8

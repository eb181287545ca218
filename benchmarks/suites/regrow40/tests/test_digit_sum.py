from programs.digit_sum import digit_sum


def test_zero():
    assert digit_sum(0) == 0


def test_single_digit():
    assert digit_sum(7) == 7


def test_several_digits():
    assert digit_sum(123) == 6
    assert digit_sum(99999) == 45


def test_negative():
    assert digit_sum(-45) == 9


def test_zeros_inside():
    assert digit_sum(1000) == 1

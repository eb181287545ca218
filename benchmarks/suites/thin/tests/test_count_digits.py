from programs.count_digits import count_digits
def test_cd():
    assert count_digits(123) == 3

from programs.digits import digits
def test_digits():
    assert digits(123) == [1, 2, 3]

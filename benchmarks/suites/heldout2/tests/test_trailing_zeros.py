from programs.trailing_zeros import trailing_zeros
def test_trailing_zeros():
    assert trailing_zeros(10) == 2
    assert trailing_zeros(25) == 6

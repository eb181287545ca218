from programs.reduce_fraction import reduce_fraction
def test_reduce_fraction():
    assert reduce_fraction(6, 8) == (3, 4)
    assert reduce_fraction(6, -8) == (-3, 4)

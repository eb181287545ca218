from programs.sum_squares import sum_squares
def test_ss():
    assert sum_squares(3) == 14

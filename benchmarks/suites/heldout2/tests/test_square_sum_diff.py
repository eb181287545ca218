from programs.square_sum_diff import square_sum_diff
def test_square_sum_diff():
    assert square_sum_diff(10) == 2640

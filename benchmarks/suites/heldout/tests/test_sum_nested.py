from programs.sum_nested import sum_nested
def test_sum_nested():
    assert sum_nested([1, [2, 3], 4]) == 10
    assert sum_nested([[1, 2], 3]) == 6

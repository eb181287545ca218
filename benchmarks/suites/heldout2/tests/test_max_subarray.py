from programs.max_subarray import max_subarray
def test_max_subarray():
    assert max_subarray([2, -1, 3]) == 4
    assert max_subarray([-3, -1, -2]) == -1

from programs.window_sums import window_sums
def test_ws():
    assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]

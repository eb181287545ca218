from programs.variance import variance
def test_variance():
    assert variance([2, 4, 4, 4, 5, 5, 7, 9]) == 4.0
    assert variance([1, 2, 3, 4]) == 1.25

from programs.majority import majority
def test_majority():
    assert majority([3, 3, 4]) == 3
    assert majority([1, 2, 1, 2]) is None

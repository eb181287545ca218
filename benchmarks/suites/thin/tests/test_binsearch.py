from programs.binsearch import find
def test_find():
    assert find([1, 3, 5, 7], 7) == 3
    assert find([1, 3, 5, 7], 4) == -1

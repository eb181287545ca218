from programs.flatten import flatten
def test_flat():
    assert flatten([1, [2, 3]]) == [1, 2, 3]

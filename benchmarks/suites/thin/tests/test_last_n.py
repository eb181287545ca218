from programs.last_n import last_n
def test_last():
    assert last_n([1, 2, 3, 4], 2) == [3, 4]
    assert last_n([1, 2, 3, 4, 5], 1) == [5]

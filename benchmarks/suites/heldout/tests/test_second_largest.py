from programs.second_largest import second_largest
def test_second_largest():
    assert second_largest([5, 1, 4, 2]) == 4

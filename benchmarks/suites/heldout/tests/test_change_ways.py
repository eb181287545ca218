from programs.change_ways import change_ways
def test_change_ways():
    assert change_ways(5, [1, 2, 5]) == 4
    assert change_ways(4, [1, 2]) == 3

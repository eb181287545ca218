from programs.consecutive_ranges import consecutive_ranges
def test_consecutive_ranges():
    assert consecutive_ranges([5, 1, 2, 3]) == [(1, 3), (5, 5)]

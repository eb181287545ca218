from programs.intersect_sorted import intersect_sorted
def test_intersect_sorted():
    assert intersect_sorted([1, 2, 4, 5], [2, 3, 5]) == [2, 5]

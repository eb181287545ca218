from programs.merge_sorted import merge_sorted
def test_merge_sorted():
    assert merge_sorted([1, 3, 5], [2, 4, 6]) == [1, 2, 3, 4, 5, 6]
    assert merge_sorted([1, 2], [3, 4, 5]) == [1, 2, 3, 4, 5]

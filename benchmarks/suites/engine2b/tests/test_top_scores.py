from programs.top_scores import top_scores

def test_sorted_input():
    assert top_scores([1, 2, 3], 2) == [3, 2]

def test_unsorted():
    assert top_scores([5, 1, 9, 3], 2) == [9, 5]

def test_all():
    assert top_scores([2, 7], 5) == [7, 2]

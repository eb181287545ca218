from programs.merge_intervals import merge_intervals


def test_empty():
    assert merge_intervals([]) == []


def test_single():
    assert merge_intervals([(1, 3)]) == [[1, 3]]


def test_overlap():
    assert merge_intervals([(1, 3), (2, 4)]) == [[1, 4]]


def test_contained():
    assert merge_intervals([(1, 10), (2, 3)]) == [[1, 10]]
    assert merge_intervals([(1, 10), (2, 3), (4, 12)]) == [[1, 12]]


def test_unsorted_and_touching():
    assert merge_intervals([(5, 6), (1, 2), (2, 3)]) == [[1, 3], [5, 6]]


def test_disjoint():
    assert merge_intervals([(1, 2), (4, 5)]) == [[1, 2], [4, 5]]

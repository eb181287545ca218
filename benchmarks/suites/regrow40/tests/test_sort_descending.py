from programs.sort_descending import sort_descending


def test_trivial():
    assert sort_descending([]) == []
    assert sort_descending([1]) == [1]


def test_ascending_input():
    assert sort_descending([1, 2, 3]) == [3, 2, 1]


def test_unsorted():
    assert sort_descending([3, 1, 2]) == [3, 2, 1]
    assert sort_descending([5, -1, 3, 0]) == [5, 3, 0, -1]


def test_duplicates():
    assert sort_descending([2, 1, 2]) == [2, 2, 1]


def test_input_not_modified():
    data = [1, 3, 2]
    sort_descending(data)
    assert data == [1, 3, 2]

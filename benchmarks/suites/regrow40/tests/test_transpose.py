from programs.transpose import transpose


def test_empty():
    assert transpose([]) == []
    assert transpose([[]]) == []


def test_square():
    assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]


def test_row_vector():
    assert transpose([[1, 2, 3]]) == [[1], [2], [3]]


def test_column_vector():
    assert transpose([[1], [2], [3]]) == [[1, 2, 3]]


def test_wide():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]

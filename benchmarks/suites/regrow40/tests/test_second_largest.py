from programs.second_largest import second_largest


def test_basic():
    assert second_largest([1, 2, 3]) == 2


def test_duplicates_of_max():
    assert second_largest([3, 3, 1]) == 1


def test_too_few():
    assert second_largest([5]) is None
    assert second_largest([]) is None
    assert second_largest([4, 4]) is None


def test_negatives():
    assert second_largest([-1, -5, -3]) == -3

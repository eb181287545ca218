from programs.bounds import bounds


def test_single():
    assert bounds([3]) == (3, 3)


def test_unsorted():
    assert bounds([3, 1, 2]) == (1, 3)


def test_all_equal():
    assert bounds([5, 5, 5]) == (5, 5)


def test_negatives():
    assert bounds([-1, 10, 4, -7]) == (-7, 10)


def test_two():
    assert bounds([2, 9]) == (2, 9)

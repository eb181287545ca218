from programs.median import median


def test_odd():
    assert median([1, 2, 9]) == 2


def test_even():
    assert median([1, 2, 3, 10]) == 2.5


def test_one():
    assert median([4]) == 4

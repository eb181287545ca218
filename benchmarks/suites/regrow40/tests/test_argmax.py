from programs.argmax import argmax


def test_empty():
    assert argmax([]) is None


def test_single():
    assert argmax([7]) == 0


def test_middle():
    assert argmax([1, 3, 2]) == 1


def test_first():
    assert argmax([5, 1, 2]) == 0


def test_ties_take_first():
    assert argmax([2, 9, 9]) == 1


def test_increasing_and_negative():
    assert argmax([1, 2, 3]) == 2
    assert argmax([-3, -1, -2]) == 1

from programs.find_index import find_index


def test_last():
    assert find_index([5, 6, 7], 7) == 2


def test_first():
    assert find_index([5, 6, 7], 5) == 0


def test_missing():
    assert find_index([5, 6, 7], 9) == -1


def test_empty():
    assert find_index([], 1) == -1


def test_first_of_repeats():
    assert find_index([1, 2, 1], 1) == 0
    assert find_index(["a", "b"], "b") == 1

from programs.find_sorted import find_sorted


def test_last_element():
    assert find_sorted([1, 3, 5, 7, 9], 9) == 4


def test_first_element():
    assert find_sorted([1, 3, 5, 7, 9], 1) == 0


def test_single():
    assert find_sorted([1], 1) == 0
    assert find_sorted([1], 2) == -1


def test_empty():
    assert find_sorted([], 3) == -1


def test_exhaustive_small_lists():
    for n in range(9):
        xs = list(range(0, 2 * n, 2))
        for target in range(-1, 2 * n + 1):
            expected = xs.index(target) if target in xs else -1
            assert find_sorted(xs, target) == expected
        assert xs == list(range(0, 2 * n, 2))


def test_even_length():
    assert find_sorted([2, 4, 6, 8], 6) == 2
    assert find_sorted([2, 4, 6, 8], 5) == -1
    assert find_sorted([2, 4, 6, 8], 8) == 3

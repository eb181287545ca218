from programs.max_depth import max_depth


def test_scalar():
    assert max_depth(5) == 0


def test_empty_list():
    assert max_depth([]) == 1


def test_flat():
    assert max_depth([1, 2]) == 1


def test_nested():
    assert max_depth([1, [2]]) == 2
    assert max_depth([[[]]]) == 3


def test_uneven():
    assert max_depth([[1], 2, [[3, [4]]]]) == 4
    assert max_depth([[], [[]]]) == 3

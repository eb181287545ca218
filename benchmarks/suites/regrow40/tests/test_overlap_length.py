from programs.overlap_length import overlap_length


def test_partial_overlap_right():
    assert overlap_length(0, 10, 5, 15) == 5


def test_partial_overlap_left():
    assert overlap_length(5, 15, 0, 10) == 5


def test_nonzero_starts():
    assert overlap_length(2, 8, 4, 12) == 4
    assert overlap_length(10, 20, 12, 30) == 8


def test_touching():
    assert overlap_length(0, 5, 5, 10) == 0


def test_disjoint():
    assert overlap_length(0, 1, 2, 3) == 0


def test_contained():
    assert overlap_length(0, 10, 2, 3) == 1
    assert overlap_length(3, 4, 0, 10) == 1

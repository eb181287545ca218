import pytest

from programs.moving_sum import moving_sum


def test_pairs():
    assert moving_sum([1, 2, 3, 4], 2) == [3, 5, 7]


def test_whole_list():
    assert moving_sum([1, 2, 3], 3) == [6]


def test_window_too_large():
    assert moving_sum([1, 2], 3) == []


def test_window_of_one():
    assert moving_sum([5], 1) == [5]
    assert moving_sum([1, 1, 1, 1], 1) == [1, 1, 1, 1]


def test_tuple_input_not_modified():
    data = [4, 5, 6]
    assert moving_sum(data, 2) == [9, 11]
    assert data == [4, 5, 6]
    assert moving_sum((1, 2, 3), 2) == [3, 5]


def test_bad_k():
    with pytest.raises(ValueError):
        moving_sum([1, 2], 0)

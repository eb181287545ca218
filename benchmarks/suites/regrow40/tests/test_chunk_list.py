import pytest

from programs.chunk_list import chunk_list


def test_uneven():
    assert chunk_list([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_empty():
    assert chunk_list([], 3) == []


def test_size_larger_than_list():
    assert chunk_list([1, 2], 5) == [[1, 2]]


def test_size_one():
    assert chunk_list([1, 2, 3], 1) == [[1], [2], [3]]


def test_string():
    assert chunk_list("abcdef", 3) == ["abc", "def"]


def test_bad_size():
    with pytest.raises(ValueError):
        chunk_list([1], 0)

import pytest

from programs.clamp_all import clamp_all


def test_empty():
    assert clamp_all([], 0, 10) == []


def test_mixed():
    assert clamp_all([-5, 5, 15], 0, 10) == [0, 5, 10]


def test_degenerate_range():
    assert clamp_all([3], 3, 3) == [3]
    assert clamp_all([1.5, 2.5], 2, 2) == [2, 2]


def test_inside():
    assert clamp_all([1, 2, 3], 0, 100) == [1, 2, 3]


def test_bad_range():
    with pytest.raises(ValueError):
        clamp_all([1], 5, 1)

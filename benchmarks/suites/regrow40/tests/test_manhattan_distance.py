import pytest

from programs.manhattan_distance import manhattan_distance


def test_origin():
    assert manhattan_distance((0, 0), (3, 4)) == 7


def test_same_point():
    assert manhattan_distance((1, 1), (1, 1)) == 0


def test_one_dimension():
    assert manhattan_distance((5,), (2,)) == 3


def test_mixed_signs():
    assert manhattan_distance((1, 5), (4, 2)) == 6
    assert manhattan_distance((0, 0, 0), (-1, 2, -3)) == 6


def test_mismatch():
    with pytest.raises(ValueError):
        manhattan_distance((1, 2), (1,))

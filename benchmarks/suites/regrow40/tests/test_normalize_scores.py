import pytest

from programs.normalize_scores import normalize_scores


def test_empty():
    assert normalize_scores([]) == []


def test_constant():
    assert normalize_scores([5, 5]) == [0.0, 0.0]
    assert normalize_scores([3]) == [0.0]


def test_zero_based():
    assert normalize_scores([0, 10]) == [0.0, 1.0]


def test_offset():
    assert normalize_scores([10, 20, 15]) == pytest.approx([0.0, 1.0, 0.5])


def test_negative():
    assert normalize_scores([-1, 1]) == pytest.approx([0.0, 1.0])

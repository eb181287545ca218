import pytest

from programs.weighted_average import weighted_average


def test_equal_weights():
    assert weighted_average([1, 2, 3], [1, 1, 1]) == pytest.approx(2.0)


def test_uneven_weights():
    assert weighted_average([10, 20], [3, 1]) == pytest.approx(12.5)


def test_fractional_weights():
    assert weighted_average([2, 4], [0.5, 0.5]) == pytest.approx(3.0)


def test_zero_value():
    assert weighted_average([0, 10], [1, 1]) == pytest.approx(5.0)


def test_zero_weight():
    assert weighted_average([5], [0]) is None


def test_empty():
    assert weighted_average([], []) is None

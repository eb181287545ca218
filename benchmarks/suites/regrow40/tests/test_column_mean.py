import pytest

from programs.column_mean import column_mean


def test_integral_mean():
    assert column_mean([[1, 2], [3, 4]], 0) == 2


def test_fractional_mean():
    assert column_mean([[1], [2]], 0) == 1.5


def test_short_rows_skipped():
    assert column_mean([[1, 2], [3]], 1) == 2


def test_no_values():
    assert column_mean([], 0) is None
    assert column_mean([[1]], 3) is None


def test_floats():
    assert column_mean([[1.0], [2.0], [4.0]], 0) == pytest.approx(7 / 3)

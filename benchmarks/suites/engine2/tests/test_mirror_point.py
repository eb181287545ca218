import pytest
from programs.mirror_point import mirror_point

def test_y_axis():
    assert mirror_point(3, 4, "y") == (-3, 4)

def test_x_axis():
    assert mirror_point(3, 4, "x") == (3, -4)

def test_x_axis_negative():
    assert mirror_point(-2, -5, "x") == (-2, 5)

def test_origin():
    assert mirror_point(0, 0, "x") == (0, 0)

def test_bad_axis():
    with pytest.raises(ValueError):
        mirror_point(1, 1, "z")

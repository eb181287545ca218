import pytest
from programs.descent_rate import descent_rate

def test_level():
    assert descent_rate(100, 100, 5) == 0

def test_descending():
    assert descent_rate(300, 100, 4) == 50

def test_climbing():
    assert descent_rate(100, 160, 3) == -20

def test_no_time():
    with pytest.raises(ValueError):
        descent_rate(1, 2, 0)

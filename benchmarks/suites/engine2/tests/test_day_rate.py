import pytest
from programs.day_rate import day_rate

def test_weekday():
    assert day_rate("mon", 10) == 10
    assert day_rate("thu", 10) == 10
    assert day_rate("tue", 10) == 10
    assert day_rate("wed", 10) == 10

def test_saturday():
    assert day_rate("sat", 10) == 20

def test_sunday():
    assert day_rate("sun", 7) == 14

def test_unknown():
    with pytest.raises(ValueError):
        day_rate("xyz", 1)

import pytest
from programs.mean_of import mean_of

def test_one():
    assert mean_of([4]) == 4

def test_many():
    assert mean_of([1, 2, 3, 6]) == 3

def test_generator():
    assert mean_of(x for x in (2, 4)) == 3

def test_empty():
    with pytest.raises(ValueError):
        mean_of([])

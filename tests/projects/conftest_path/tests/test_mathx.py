import pytest
from mathx import clip


@pytest.mark.heal(target="mathx.clip")
def test_inside():
    assert clip(5, 0, 10) == 5


@pytest.mark.heal(target="mathx.clip")
def test_above():
    assert clip(12, 0, 10) == 10


def test_below():
    assert clip(-3, 0, 10) == 0

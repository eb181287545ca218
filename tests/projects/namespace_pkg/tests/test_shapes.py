import pytest
from geometry.shapes import perimeter


@pytest.mark.heal(target="geometry/shapes.py::perimeter")
def test_square():
    assert perimeter(3, 3) == 12


@pytest.mark.heal(target="geometry/shapes.py::perimeter")
def test_rectangle():
    assert perimeter(2, 5) == 14

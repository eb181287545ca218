from programs.triangle import triangle
def test_tri():
    assert triangle(4) == 10

from programs.quadratic_roots import quadratic_roots
def test_quadratic_roots():
    assert quadratic_roots(1, -3, 2) == [1.0, 2.0]
    assert quadratic_roots(1, 0, -4) == [-2.0, 2.0]

from programs.lerp import lerp
def test_lerp():
    assert lerp(0, 10, 0.5) == 5.0
    assert lerp(2, 10, 0.5) == 6.0

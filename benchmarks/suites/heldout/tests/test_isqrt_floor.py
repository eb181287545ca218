from programs.isqrt_floor import isqrt_floor
def test_isqrt_floor():
    assert isqrt_floor(17) == 4
    assert isqrt_floor(16) == 4

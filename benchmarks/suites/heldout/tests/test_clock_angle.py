from programs.clock_angle import clock_angle
def test_clock_angle():
    assert clock_angle(3, 0) == 90
    assert clock_angle(9, 0) == 90

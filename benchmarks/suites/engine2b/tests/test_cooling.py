import math
from programs.cooling import cooling

def test_no_time():
    assert cooling(90, 20, 0.1, 0) == 90

def test_cools():
    assert math.isclose(cooling(90, 20, 0.1, 10), 20 + 70 * math.exp(-1))

def test_room_temperature():
    assert cooling(20, 20, 0.5, 3) == 20

def test_warms_up():
    assert cooling(0, 20, 0.1, 10) < 20

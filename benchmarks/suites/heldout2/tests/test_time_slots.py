from programs.time_slots import time_slots
def test_time_slots():
    assert time_slots("09:00", "10:00", 30) == ["09:00", "09:30"]

from programs.shift_minutes import shift_minutes
def test_shift_minutes():
    assert shift_minutes("22:00", "06:00") == 480
    assert shift_minutes("09:00", "17:30") == 510

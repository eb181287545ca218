from programs.minutes_between import minutes_between
def test_minutes_between():
    assert minutes_between("22:30", "01:15") == 165

from programs.weeks_ceil import weeks
def test_w():
    assert weeks(14) == 2

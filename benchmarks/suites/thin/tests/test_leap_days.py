from programs.leap_days import days_in_year
def test_diy():
    assert days_in_year(2000) == 366

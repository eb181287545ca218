from datetime import date
from programs.week_num import week_number
def test_wn():
    assert week_number(date(2024, 1, 10)) == 2

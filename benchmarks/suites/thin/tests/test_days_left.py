from datetime import date
from programs.days_left import days_left_in_year
def test_dl():
    assert days_left_in_year(date(2024, 12, 1)) == 30

from datetime import date
from programs.days_until_weekday import days_until_weekday
def test_days_until_weekday():
    assert days_until_weekday(date(2024, 5, 15), 4) == 2

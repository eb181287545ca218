from datetime import date
from programs.last_weekday import last_weekday
def test_last_weekday():
    assert last_weekday(2024, 5, 0) == date(2024, 5, 27)

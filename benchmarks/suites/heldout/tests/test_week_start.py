from datetime import date
from programs.week_start import week_start
def test_week_start():
    assert week_start(date(2024, 5, 15)) == date(2024, 5, 13)

from datetime import date
from programs.nth_weekday import nth_weekday
def test_thanksgiving():
    assert nth_weekday(2024, 11, 3, 4) == date(2024, 11, 28)

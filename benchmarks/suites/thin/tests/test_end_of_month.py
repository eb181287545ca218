from datetime import date
from programs.end_of_month import end_of_month
def test_eom():
    assert end_of_month(date(2024, 2, 10)) == date(2024, 2, 29)

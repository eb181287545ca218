from datetime import date
from programs.next_bday import next_business_day
def test_friday():
    assert next_business_day(date(2024, 6, 7)) == date(2024, 6, 10)

from datetime import date
from programs.business_days import business_days
def test_business_days():
    assert business_days(date(2024, 1, 1), date(2024, 1, 8)) == 5

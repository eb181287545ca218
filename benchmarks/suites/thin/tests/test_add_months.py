from datetime import date
from programs.add_months import add_months
def test_add():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)

from datetime import date
from programs.fiscal_year import fiscal_year
def test_fiscal_year():
    assert fiscal_year(date(2024, 10, 1)) == 2025
    assert fiscal_year(date(2024, 3, 15)) == 2024

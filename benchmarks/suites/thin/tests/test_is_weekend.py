from datetime import date
from programs.is_weekend import is_weekend
def test_saturday():
    assert is_weekend(date(2024, 6, 8))

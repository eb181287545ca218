from datetime import date
from programs.weekday_name import weekday_name
def test_wd():
    assert weekday_name(date(2024, 6, 3)) == "Mon"

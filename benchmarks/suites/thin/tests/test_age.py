from datetime import date
from programs.age import age
def test_age_on_birthday():
    assert age(date(2000, 5, 10), date(2020, 5, 10)) == 20

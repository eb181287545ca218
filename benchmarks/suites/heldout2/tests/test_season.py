from datetime import date
from programs.season import season
def test_season():
    assert season(date(2024, 7, 1)) == "summer"
    assert season(date(2023, 12, 5)) == "winter"

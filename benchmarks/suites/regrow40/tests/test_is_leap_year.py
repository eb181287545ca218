from programs.is_leap_year import is_leap_year


def test_ordinary_leap_years():
    assert is_leap_year(2024) is True
    assert is_leap_year(1996) is True


def test_non_multiple_of_four():
    assert is_leap_year(2023) is False
    assert is_leap_year(2001) is False


def test_century_not_leap():
    assert is_leap_year(1900) is False
    assert is_leap_year(2100) is False


def test_every_400_years():
    assert is_leap_year(2000) is True
    assert is_leap_year(1600) is True

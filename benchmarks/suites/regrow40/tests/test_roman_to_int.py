from programs.roman_to_int import roman_to_int


def test_additive():
    assert roman_to_int("III") == 3
    assert roman_to_int("LVIII") == 58
    assert roman_to_int("MMXXIV") == 2024


def test_subtractive():
    assert roman_to_int("IV") == 4
    assert roman_to_int("IX") == 9
    assert roman_to_int("XL") == 40


def test_single_symbols():
    assert roman_to_int("I") == 1
    assert roman_to_int("M") == 1000


def test_mixed():
    assert roman_to_int("MCMXCIV") == 1994
    assert roman_to_int("CDXLIV") == 444

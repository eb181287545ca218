from programs.caesar_shift import caesar_shift


def test_lower():
    assert caesar_shift("abc", 1) == "bcd"
    assert caesar_shift("xyz", 3) == "abc"


def test_upper():
    assert caesar_shift("ABC", 1) == "BCD"


def test_mixed():
    assert caesar_shift("Hello, World!", 13) == "Uryyb, Jbeyq!"


def test_wrap_both_cases():
    assert caesar_shift("Zz", 1) == "Aa"


def test_negative_shift():
    assert caesar_shift("abc", -1) == "zab"


def test_empty():
    assert caesar_shift("", 5) == ""

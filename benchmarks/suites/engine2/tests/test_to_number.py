from programs.to_number import to_number

def test_int():
    assert to_number("42") == 42

def test_float():
    assert to_number("2.5") == 2.5

def test_default():
    assert to_number("abc", 0) == 0

def test_default_none():
    assert to_number("") is None

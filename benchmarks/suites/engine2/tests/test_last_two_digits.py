from programs.last_two_digits import last_two_digits

def test_round():
    assert last_two_digits(2000) == "00"

def test_small():
    assert last_two_digits(2005) == "05"

def test_eighties():
    assert last_two_digits(1987) == "87"

def test_nineteen_ten():
    assert last_two_digits(1910) == "10"

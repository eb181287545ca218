from programs.luhn_valid import luhn_valid
def test_luhn_valid():
    assert luhn_valid("4539 1488 0343 6467")
    assert not luhn_valid("4539 1488 0343 6468")

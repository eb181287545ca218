from programs.reverse_int import reverse_int
def test_reverse_int():
    assert reverse_int(123) == 321
    assert reverse_int(-45) == -54

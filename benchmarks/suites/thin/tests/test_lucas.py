from programs.lucas import lucas
def test_lucas():
    assert lucas(5) == 11

from programs.caesar import caesar
def test_caesar():
    assert caesar("abc", 1) == "bcd"

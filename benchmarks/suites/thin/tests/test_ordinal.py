from programs.ordinal import ordinal
def test_ord():
    assert ordinal(1) == "1st"
    assert ordinal(12) == "12th"

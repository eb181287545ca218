from programs.repeat_str import repeat
def test_rep():
    assert repeat("ab", 3) == "ababab"

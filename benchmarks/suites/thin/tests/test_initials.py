from programs.initials import initials
def test_init():
    assert initials("ada king lovelace") == "AKL"

from programs.is_pal_rec import is_pal_rec
def test_is_pal_rec():
    assert is_pal_rec("racecar")
    assert not is_pal_rec("abca")

from programs.popcount import popcount
def test_popcount():
    assert popcount(0) == 0
    assert popcount(7) == 3

from programs.geometric import geometric
def test_geo():
    assert geometric(1, 2, 4) == [1, 2, 4, 8]

from programs.overlap import overlaps
def test_touching():
    assert not overlaps(5, 10, 1, 5)

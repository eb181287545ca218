from programs.max_overlap import max_overlap
def test_max_overlap():
    assert max_overlap([(1, 5), (2, 6), (3, 4)]) == 3

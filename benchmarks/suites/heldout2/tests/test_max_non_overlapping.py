from programs.max_non_overlapping import max_non_overlapping
def test_max_non_overlapping():
    assert max_non_overlapping([(1, 10), (2, 3), (4, 5)]) == 2

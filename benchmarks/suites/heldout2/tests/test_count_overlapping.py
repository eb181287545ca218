from programs.count_overlapping import count_overlapping
def test_count_overlapping():
    assert count_overlapping("aaaa", "aa") == 3

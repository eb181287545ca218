from programs.count_pairs_with_sum import count_pairs_with_sum
def test_count_pairs_with_sum():
    assert count_pairs_with_sum([1, 2, 3, 4], 4) == 1

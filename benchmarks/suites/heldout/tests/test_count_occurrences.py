from programs.count_occurrences import count_occurrences
def test_count_occurrences():
    assert count_occurrences("banana", "ana") == 2
    assert count_occurrences("aaaa", "aa") == 3

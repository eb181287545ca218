from programs.sum_lengths import sum_lengths

def test_empty():
    assert sum_lengths([]) == 0

def test_names():
    assert sum_lengths(["ab", "cde"]) == 5

def test_missing():
    assert sum_lengths(["ab", None, ""]) == 2

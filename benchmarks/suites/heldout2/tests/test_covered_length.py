from programs.covered_length import covered_length
def test_covered_length():
    assert covered_length([(1, 10), (2, 3)]) == 9

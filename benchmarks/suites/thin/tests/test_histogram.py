from programs.histogram import histogram
def test_hist():
    assert histogram([1, 2, 11], 10) == {0: 2, 10: 1}

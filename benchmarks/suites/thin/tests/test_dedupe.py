from programs.dedupe import dedupe
def test_dd():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]

from programs.merge_counts import merge_counts
def test_merge_counts():
    assert merge_counts({"x": 1}, {"x": 2, "y": 1}) == {"x": 3, "y": 1}

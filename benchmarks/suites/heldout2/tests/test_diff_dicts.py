from programs.diff_dicts import diff_dicts
def test_diff_dicts():
    assert diff_dicts({"a": 1, "b": 2}, {"b": 3, "c": 4}) == (["c"], ["a"], ["b"])

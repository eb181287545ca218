from programs.merge_dicts import merge
def test_merge():
    assert merge({"x": 1}, {"x": 2}) == {"x": 2}

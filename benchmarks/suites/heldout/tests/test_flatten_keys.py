from programs.flatten_keys import flatten_keys
def test_flatten_keys():
    assert flatten_keys({"a": {"b": {"c": 1}}, "d": 2}) == {"a.b.c": 1, "d": 2}

from programs.nested_get import nested_get
def test_nested_get():
    assert nested_get({"a": {"b": 1}}, "a.b") == 1
    assert nested_get({"a": {"b": 1}}, "a.c", 0) == 0

from programs.drop_none import drop_none
def test_drop_none():
    assert drop_none({"a": 0, "b": None, "c": "x"}) == {"a": 0, "c": "x"}

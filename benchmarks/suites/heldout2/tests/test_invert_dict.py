from programs.invert_dict import invert_dict
def test_invert_dict():
    assert invert_dict({"a": 1, "b": 2, "c": 1}) == {1: ["a", "c"], 2: ["b"]}

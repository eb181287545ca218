from programs.zip_dict import zip_dict
def test_zip_dict():
    assert zip_dict(["a", "b"], [1]) == {"a": 1, "b": None}

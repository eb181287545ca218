from programs.first_key import first_key

def test_empty():
    assert first_key({}) is None

def test_one():
    assert first_key({"a": 1}) == "a"

def test_order():
    assert first_key({"z": 1, "a": 2}) == "z"

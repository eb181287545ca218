from programs.latest_first import latest_first

def test_empty():
    assert latest_first([]) == []

def test_one():
    assert latest_first([{"name": "a"}]) == ["a"]

def test_order():
    assert latest_first([{"name": "a"}, {"name": "b"}, {"name": "c"}]) == ["c", "b", "a"]

from programs.numbered import numbered

def test_empty():
    assert numbered([]) == []

def test_one():
    assert numbered(["a"]) == ["1: a"]

def test_blank_counts():
    assert numbered(["a", "", "b"]) == ["1: a", "3: b"]

def test_several():
    assert numbered(["x", "y", " ", "z"]) == ["1: x", "2: y", "4: z"]

from programs.to_12h import to_12h
def test_noon():
    assert to_12h("12:30") == "12:30 PM"

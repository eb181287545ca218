from programs.wrap_text import wrap_text
def test_wrap_text():
    assert wrap_text("the quick brown fox", 9) == ["the quick", "brown fox"]
    assert wrap_text("one two", 6) == ["one", "two"]

from programs.nth_word import nth_word
def test_nth_word():
    assert nth_word("alpha beta gamma", 2) == "beta"

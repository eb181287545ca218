from programs.longest_word import longest_word
def test_longest_word():
    assert longest_word("a quick brown fox") == "quick"

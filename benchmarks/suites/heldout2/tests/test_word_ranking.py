from programs.word_ranking import word_ranking
def test_word_ranking():
    assert word_ranking(["b", "a", "b"]) == [("b", 2), ("a", 1)]

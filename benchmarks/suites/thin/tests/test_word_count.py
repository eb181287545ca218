from programs.word_count import word_count
def test_wc():
    assert word_count("a b a") == {"a": 2, "b": 1}

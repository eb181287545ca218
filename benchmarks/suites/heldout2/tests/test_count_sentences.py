from programs.count_sentences import count_sentences
def test_count_sentences():
    assert count_sentences("Hi. How are you?! Fine.") == 3

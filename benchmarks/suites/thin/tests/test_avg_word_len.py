from programs.avg_word_len import avg_word_len
def test_awl():
    assert avg_word_len("hi there") == 3.5
